package fakegithub_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/internal/fakegithub"
)

// TestListRunsQuery: the filters of the runs listing, in the forms
// GitHub accepts, and its order.
func TestListRunsQuery(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t, "o/r", "tok")
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	add := func(id int64, at time.Time, status, conclusion, branch string) {
		s.AddRun(fakegithub.Run{ID: id, Attempt: 1, Status: status, Conclusion: conclusion, HeadBranch: branch,
			CreatedAt: at, Path: ".github/workflows/sweep.yml", WorkflowID: 42})
	}
	add(1, day.Add(-time.Second), "completed", "success", "main")   // Feb 28, 23:59:59
	add(2, day, "completed", "failure", "main")                     // Mar 1, 00:00:00
	add(3, day.Add(12*time.Hour), "", "success", "dev")             // no status: completed
	add(4, day.Add(12*time.Hour), "in_progress", "", "main")        // same time as 3
	add(5, day.Add(24*time.Hour-time.Second), "queued", "", "main") // Mar 1, 23:59:59
	add(6, day.Add(24*time.Hour), "completed", "cancelled", "main") // Mar 2, 00:00:00
	s.AddRun(fakegithub.Run{ID: 7, Status: "completed", CreatedAt: day, Path: ".github/workflows/other.yml", WorkflowID: 43})

	noon := day.Add(12 * time.Hour).Format(time.RFC3339)
	tests := []struct {
		query string
		want  []int64
	}{
		{"", []int64{6, 5, 4, 3, 2, 1}},
		{"status=completed", []int64{6, 3, 2, 1}},
		{"status=in_progress", []int64{4}},
		{"status=queued", []int64{5}},
		{"status=success", []int64{3, 1}},
		{"status=cancelled", []int64{6}},
		{"branch=dev", []int64{3}},
		{"created=2026-03-01", []int64{5, 4, 3, 2}},
		{"created=2026-02-28..2026-03-01", []int64{5, 4, 3, 2, 1}},
		{"created=>=2026-03-01", []int64{6, 5, 4, 3, 2}},
		{"created=<=2026-03-01", []int64{5, 4, 3, 2, 1}},
		{"created=>2026-03-01", []int64{6}},
		{"created=<2026-03-01", []int64{1}},
		{"created=" + noon, []int64{4, 3}},
		{"created=>=" + noon, []int64{6, 5, 4, 3}},
		{"created=>" + noon, []int64{6, 5}},
		{"created=<=" + noon, []int64{4, 3, 2, 1}},
		{"created=<" + noon, []int64{2, 1}},
		{"created=" + noon + "..*", []int64{6, 5, 4, 3}},
		{"created=*.." + noon, []int64{4, 3, 2, 1}},
		{"created=2026-03-01T00:00:00Z..2026-03-01T23:59:59Z", []int64{5, 4, 3, 2}},
		{"created=2026-03-01T01:00:00%2B01:00..2026-03-01T00:00:00Z", []int64{2}},
		{"status=completed&branch=main&created=2026-03-01..2026-03-02", []int64{6, 2}},
		{"per_page=2&page=2", []int64{4, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			t.Parallel()
			code, got := listRuns(t, s, "sweep.yml", tt.query)
			require.Equal(t, http.StatusOK, code)
			require.Equal(t, tt.want, got)
		})
	}

	code, got := listRuns(t, s, "42", "status=success")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []int64{3, 1}, got, "the workflow by id")
	code, got = listRuns(t, s, "", "created=2026-03-01")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []int64{5, 4, 3, 7, 2}, got, "every workflow")
	for _, bad := range []struct{ workflow, query string }{
		{"sweep.yml", "status=done"},
		{"sweep.yml", "created=yesterday"},
		{"sweep.yml", "created=2026-03-01..soon"},
	} {
		code, _ := listRuns(t, s, bad.workflow, bad.query)
		require.Equal(t, http.StatusUnprocessableEntity, code, bad.query)
	}
	for _, unknown := range []string{"nope.yml", "44", "workflows"} {
		code, _ := listRuns(t, s, unknown, "")
		require.Equal(t, http.StatusNotFound, code, unknown)
	}
}

// listRuns asks for a workflow's runs ("" the repository's) and returns the
// status code and the ids served.
func listRuns(t *testing.T, s *fakegithub.Server, workflow, query string) (int, []int64) {
	t.Helper()
	u := s.BaseURL() + "repos/o/r/actions/runs"
	if workflow != "" {
		u = s.BaseURL() + "repos/o/r/actions/workflows/" + url.PathEscape(workflow) + "/runs"
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u+"?"+query, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		TotalCount   int `json:"total_count"`
		WorkflowRuns []struct {
			ID int64 `json:"id"`
		} `json:"workflow_runs"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	ids := []int64{}
	for _, r := range body.WorkflowRuns {
		ids = append(ids, r.ID)
	}
	return resp.StatusCode, ids
}
