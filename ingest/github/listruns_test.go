package github_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
)

const (
	sweepPath = ".github/workflows/run-sweep.yml"
	sweepID   = 111
	otherPath = ".github/workflows/other.yml"
	otherID   = 222
)

// listBase is the created_at of the first made-up run.
var listBase = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// newListEnv is a fake with no run and a client of it.
func newListEnv(t *testing.T) *env {
	t.Helper()
	e := &env{fake: fakegithub.New(t, testRepo, testToken), cache: t.TempDir(), logs: &logBuffer{}}
	e.client = e.newClient(t, nil)
	return e
}

// sweepRun is a completed run-sweep.yml run on main created at.
func sweepRun(id int64, at time.Time) fakegithub.Run {
	return fakegithub.Run{ID: id, Attempt: 1, Name: "Run Sweep", Event: "push", Status: "completed", Conclusion: "success",
		HeadSHA: fmt.Sprintf("%040x", id), HeadBranch: "main", CreatedAt: at, RunStartedAt: at.Add(time.Minute),
		Path: sweepPath, WorkflowID: sweepID, PullRequests: []int{7}}
}

func ids(runs []github.ListedRun) []int64 {
	out := make([]int64, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	return out
}

// oldestFirst sorts runs as ListRuns promises and returns their ids.
func oldestFirst(runs []fakegithub.Run) []int64 {
	runs = slices.Clone(runs)
	slices.SortFunc(runs, func(a, b fakegithub.Run) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	out := make([]int64, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	return out
}

// TestListRunsPages: every page is read, runs still in progress and runs
// of other workflows are left out, the fields come through.
func TestListRunsPages(t *testing.T) {
	t.Parallel()
	e := newListEnv(t)
	var want []fakegithub.Run
	for i := range 250 {
		r := sweepRun(int64(1000+i), listBase.Add(time.Duration(i)*time.Hour))
		r.Attempt = 1 + i%3
		e.fake.AddRun(r)
		want = append(want, r)
	}
	for i := range 5 {
		r := sweepRun(int64(5000+i), listBase.Add(time.Duration(i)*time.Minute))
		r.Status, r.Conclusion = "in_progress", ""
		e.fake.AddRun(r)
	}
	for i := range 7 {
		r := sweepRun(int64(6000+i), listBase.Add(time.Duration(i)*time.Minute))
		r.Path, r.WorkflowID = otherPath, otherID
		e.fake.AddRun(r)
	}

	got, err := e.client.ListRuns(t.Context(), github.RunFilter{Workflow: "run-sweep.yml"})
	require.NoError(t, err)
	require.Equal(t, oldestFirst(want), ids(got))
	require.Equal(t, 3, e.fake.Count(fakegithub.RouteListWorkflowRuns), "250 runs are 3 pages of 100")
	require.Zero(t, e.fake.Count(fakegithub.RouteListRuns))
	at := listBase.Add(4 * time.Hour)
	require.Equal(t, github.ListedRun{ID: 1004, Attempt: 2, Name: "Run Sweep", Event: "push", Status: "completed",
		Conclusion: "success", HeadSHA: fmt.Sprintf("%040x", 1004), HeadBranch: "main", Path: sweepPath,
		CreatedAt: at, RunStartedAt: at.Add(time.Minute)}, got[4])

	// Every workflow: the other workflow's runs too, and a run registered
	// without a status (as LoadTree may) counts as completed.
	bare := fakegithub.Run{ID: 7000, Attempt: 1, CreatedAt: listBase.Add(-time.Hour)}
	e.fake.AddRun(bare)
	got, err = e.client.ListRuns(t.Context(), github.RunFilter{})
	require.NoError(t, err)
	require.Len(t, got, 250+7+1)
	require.Equal(t, int64(7000), got[0].ID)
	require.Equal(t, "completed", got[0].Status)
	require.Equal(t, 3, e.fake.Count(fakegithub.RouteListRuns))
}

// TestListRunsFilters: branch, created bounds (inclusive, to the second
// and below it) and the workflow by name or id.
func TestListRunsFilters(t *testing.T) {
	t.Parallel()
	e := newListEnv(t)
	var all []fakegithub.Run
	// 72 runs, one an hour over three days, alternating branches; every
	// third in the other workflow.
	for i := range 72 {
		r := sweepRun(int64(100+i), listBase.Add(time.Duration(i)*time.Hour))
		if i%2 == 1 {
			r.HeadBranch = "feature"
		}
		if i%3 == 2 {
			r.Path, r.WorkflowID = otherPath, otherID
		}
		e.fake.AddRun(r)
		all = append(all, r)
	}
	day2, day3 := listBase.Add(24*time.Hour), listBase.Add(48*time.Hour)
	tests := []struct {
		name string
		f    github.RunFilter
		keep func(fakegithub.Run) bool
		n    int // the expected count, as a check on keep
	}{
		{name: "every workflow, every branch", f: github.RunFilter{},
			keep: func(fakegithub.Run) bool { return true }, n: 72},
		{name: "workflow by name", f: github.RunFilter{Workflow: "run-sweep.yml"},
			keep: func(r fakegithub.Run) bool { return r.Path == sweepPath }, n: 48},
		{name: "workflow by id", f: github.RunFilter{Workflow: "222"},
			keep: func(r fakegithub.Run) bool { return r.Path == otherPath }, n: 24},
		{name: "branch", f: github.RunFilter{Workflow: "run-sweep.yml", Branch: "feature"},
			keep: func(r fakegithub.Run) bool { return r.Path == sweepPath && r.HeadBranch == "feature" }, n: 24},
		{name: "created, both bounds inclusive", f: github.RunFilter{Since: day2, Until: day3},
			keep: func(r fakegithub.Run) bool { return !r.CreatedAt.Before(day2) && !r.CreatedAt.After(day3) }, n: 25},
		{name: "created since", f: github.RunFilter{Since: day3},
			keep: func(r fakegithub.Run) bool { return !r.CreatedAt.Before(day3) }, n: 24},
		{name: "created until", f: github.RunFilter{Until: day2},
			keep: func(r fakegithub.Run) bool { return !r.CreatedAt.After(day2) }, n: 25},
		{name: "bounds below the second", f: github.RunFilter{Since: day2.Add(500 * time.Millisecond), Until: day3.Add(-500 * time.Millisecond)},
			keep: func(r fakegithub.Run) bool { return r.CreatedAt.After(day2) && r.CreatedAt.Before(day3) }, n: 23},
		{name: "bounds in another zone", f: github.RunFilter{Since: day2.In(time.FixedZone("PST", -8*3600)), Until: day2.Add(5 * time.Hour).In(time.FixedZone("IST", 5*3600+1800))},
			keep: func(r fakegithub.Run) bool {
				return !r.CreatedAt.Before(day2) && !r.CreatedAt.After(day2.Add(5*time.Hour))
			}, n: 6},
		{name: "everything together", f: github.RunFilter{Workflow: "111", Branch: "main", Since: day2, Until: day3},
			keep: func(r fakegithub.Run) bool {
				return r.Path == sweepPath && r.HeadBranch == "main" && !r.CreatedAt.Before(day2) && !r.CreatedAt.After(day3)
			}, n: 9},
		{name: "nothing matches", f: github.RunFilter{Branch: "gone"},
			keep: func(fakegithub.Run) bool { return false }, n: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := oldestFirst(slices.DeleteFunc(slices.Clone(all), func(r fakegithub.Run) bool { return !tt.keep(r) }))
			require.Len(t, want, tt.n)
			got, err := e.client.ListRuns(t.Context(), tt.f)
			require.NoError(t, err)
			require.Equal(t, want, ids(got))
		})
	}
}

// manyRuns registers n completed run-sweep.yml runs two per second-exact
// created_at, 23 minutes apart, with ids shuffled against time so the
// order (created_at, then id) is not the id order.
func manyRuns(e *env, n int) []fakegithub.Run {
	perm := rand.New(rand.NewPCG(1, 2)).Perm(n)
	runs := make([]fakegithub.Run, n)
	for i := range n {
		runs[i] = sweepRun(int64(30000000000+perm[i]), listBase.Add(time.Duration(i/2)*23*time.Minute))
		e.fake.AddRun(runs[i])
	}
	return runs
}

// TestListRunsBeyondCap: a query matching more runs than the API serves
// is split by time until every window fits; every run comes back once,
// oldest first.
func TestListRunsBeyondCap(t *testing.T) {
	if testing.Short() {
		t.Skip("lists past the API cap: not under -short")
	}
	t.Parallel()
	e := newListEnv(t)
	runs := manyRuns(e, 2300)
	// A few in progress and on another branch, among them, to be left out.
	for i := range 20 {
		r := sweepRun(int64(40000000000+i), listBase.Add(time.Duration(i)*17*time.Hour))
		r.Status = "in_progress"
		e.fake.AddRun(r)
	}
	since, until := runs[300].CreatedAt, runs[1999].CreatedAt
	tests := []struct {
		name string
		f    github.RunFilter
		want []fakegithub.Run
	}{
		{name: "open window", f: github.RunFilter{Workflow: "run-sweep.yml"}, want: runs},
		{name: "open window, every workflow", f: github.RunFilter{}, want: runs},
		{name: "bounded window", f: github.RunFilter{Workflow: "run-sweep.yml", Since: since, Until: until}, want: runs[300:2000]},
		{name: "open start", f: github.RunFilter{Workflow: "run-sweep.yml", Until: until}, want: runs[:2000]},
		{name: "open end", f: github.RunFilter{Workflow: "run-sweep.yml", Since: since}, want: runs[300:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requests := func() int {
				return e.fake.Count(fakegithub.RouteListWorkflowRuns) + e.fake.Count(fakegithub.RouteListRuns)
			}
			before := requests()
			got, err := e.client.ListRuns(t.Context(), tt.f)
			require.NoError(t, err)
			require.Equal(t, oldestFirst(tt.want), ids(got))
			t.Logf("%d runs in %d requests", len(got), requests()-before)
		})
	}
}

// TestListRunsUnsplittable: more runs created in one second than the API
// serves cannot be listed; the error says so rather than dropping some.
func TestListRunsUnsplittable(t *testing.T) {
	t.Parallel()
	e := newListEnv(t)
	for i := range fakegithub.RunListCap + 1 {
		e.fake.AddRun(sweepRun(int64(1+i), listBase))
	}
	_, err := e.client.ListRuns(t.Context(), github.RunFilter{Workflow: "run-sweep.yml"})
	require.ErrorContains(t, err, "workflow run-sweep.yml of SemiAnalysisAI/InferenceX: list runs (created >=2026-03-01T00:00:00Z): 1001 runs created at 2026-03-01T00:00:00Z, more than the 1000 the API serves for one query")
}

// runPage is a page of the runs listing as served.
type runPage struct {
	TotalCount   int `json:"total_count"`
	WorkflowRuns []struct {
		ID int64 `json:"id"`
	} `json:"workflow_runs"`
}

// getRuns asks the fake for a page of run-sweep.yml's runs directly.
func getRuns(t *testing.T, e *env, query string) (runPage, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet,
		e.fake.BaseURL()+"repos/"+testRepo+"/actions/workflows/run-sweep.yml/runs?"+query, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var p runPage
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
	return p, resp.Header
}

// TestFakeRunListCap: the fake serves at most 1000 results of a filtered
// query, as GitHub does, and says how many there are; unfiltered it
// serves them all.
func TestFakeRunListCap(t *testing.T) {
	t.Parallel()
	e := newListEnv(t)
	manyRuns(e, 2300)

	p, h := getRuns(t, e, "status=completed&per_page=100&page=10")
	require.Equal(t, 2300, p.TotalCount)
	require.Len(t, p.WorkflowRuns, 100)
	require.NotContains(t, h.Get("Link"), `rel="next"`)
	p, _ = getRuns(t, e, "status=completed&per_page=100&page=11")
	require.Equal(t, 2300, p.TotalCount)
	require.Empty(t, p.WorkflowRuns)

	p, h = getRuns(t, e, "per_page=100&page=11")
	require.Len(t, p.WorkflowRuns, 100)
	require.Contains(t, h.Get("Link"), `rel="next"`)
}

// TestListRunsFaults: rate limits and 5xx are retried like every request.
func TestListRunsFaults(t *testing.T) {
	t.Parallel()
	e := newListEnv(t)
	var want []fakegithub.Run
	for i := range 150 {
		r := sweepRun(int64(1+i), listBase.Add(time.Duration(i)*time.Hour))
		e.fake.AddRun(r)
		want = append(want, r)
	}
	e.fake.Inject(fakegithub.Fault{Route: fakegithub.RouteListWorkflowRuns, Kind: fakegithub.TooManyRequests, Times: 1})
	e.fake.Inject(fakegithub.Fault{Route: fakegithub.RouteListWorkflowRuns, Kind: fakegithub.Status, Status: 502, Times: 1})
	got, err := e.client.ListRuns(t.Context(), github.RunFilter{Workflow: "run-sweep.yml"})
	require.NoError(t, err)
	require.Equal(t, oldestFirst(want), ids(got))
	require.Equal(t, 2, e.fake.Hits(fakegithub.RouteListWorkflowRuns))
	require.Equal(t, 4, e.fake.Count(fakegithub.RouteListWorkflowRuns), "2 pages and 2 faulted tries")
	require.Contains(t, e.logs.String(), `"limit":"secondary","wait":1`)
	require.Contains(t, e.logs.String(), "request failed: retrying")

	e.fake.Inject(fakegithub.Fault{Route: fakegithub.RouteListRuns, Kind: fakegithub.Status, Status: 403, Message: "Resource not accessible by integration"})
	_, err = e.client.ListRuns(t.Context(), github.RunFilter{})
	require.ErrorContains(t, err, "repository SemiAnalysisAI/InferenceX: list runs (any time, page 1): GET ")
	require.ErrorContains(t, err, "403 Resource not accessible by integration")
}

// TestListRunsErrors: a malformed filter fails before any request; an
// unknown workflow names itself and the repository.
func TestListRunsErrors(t *testing.T) {
	t.Parallel()
	e := newListEnv(t)
	e.fake.AddRun(sweepRun(1, listBase))
	tests := []struct {
		name     string
		f        github.RunFilter
		wantErr  string
		requests int
	}{
		{name: "workflow path", f: github.RunFilter{Workflow: sweepPath},
			wantErr: `workflow ".github/workflows/run-sweep.yml" is not a workflow file name (run-sweep.yml) or id`},
		{name: "workflow escaping", f: github.RunFilter{Workflow: "../runs"}, wantErr: `workflow "../runs" is not`},
		{name: "workflow dot-dot", f: github.RunFilter{Workflow: ".."}, wantErr: `workflow ".." is not`},
		{name: "workflow with a space", f: github.RunFilter{Workflow: "run sweep.yml"}, wantErr: `workflow "run sweep.yml" is not`},
		{name: "workflow with a query", f: github.RunFilter{Workflow: "x.yml?page=2"}, wantErr: `workflow "x.yml?page=2" is not`},
		{name: "since after until", f: github.RunFilter{Since: listBase.Add(time.Second), Until: listBase},
			wantErr: "runs created since 2026-03-01T00:00:01Z until 2026-03-01T00:00:00Z: the start is after the end"},
		{name: "unknown workflow name", f: github.RunFilter{Workflow: "nope.yml"}, requests: 1,
			wantErr: `workflow "nope.yml" not found in SemiAnalysisAI/InferenceX`},
		{name: "unknown workflow id", f: github.RunFilter{Workflow: "999"}, requests: 1,
			wantErr: `workflow "999" not found in SemiAnalysisAI/InferenceX`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.fake.Count(fakegithub.RouteListWorkflowRuns) + e.fake.Count(fakegithub.RouteListRuns)
			got, err := e.client.ListRuns(t.Context(), tt.f)
			require.ErrorContains(t, err, tt.wantErr)
			require.Nil(t, got)
			after := e.fake.Count(fakegithub.RouteListWorkflowRuns) + e.fake.Count(fakegithub.RouteListRuns)
			require.Equal(t, tt.requests, after-before, "requests made")
		})
	}
	// The same filters that failed work once they are right.
	got, err := e.client.ListRuns(t.Context(), github.RunFilter{Workflow: "run-sweep.yml", Since: listBase, Until: listBase})
	require.NoError(t, err)
	require.Equal(t, []int64{1}, ids(got))
}

// TestListRunEntriesRejects: each listing entry is checked on its own. An
// entry that is not a usable run is rejected with its id as served and
// the reason, and the others are kept (ListRunEntries); ListRuns, whose
// callers queue the runs, fails naming the first one.
func TestListRunEntriesRejects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		listed map[string]any
		want   github.RejectedRun
	}{
		{"negative id", map[string]any{"id": -5}, github.RejectedRun{ID: "-5", Reason: "id -5 is not positive"}},
		{"zero id", map[string]any{"id": 0}, github.RejectedRun{ID: "0", Reason: "id 0 is not positive"}},
		{"no id", map[string]any{"id": nil}, github.RejectedRun{Reason: "no id"}},
		{"id not a number", map[string]any{"id": "x"}, github.RejectedRun{ID: `"x"`,
			Reason: "not a run object: json: cannot unmarshal string into Go struct field wireListedRun.id of type int64"}},
		{"created_at malformed", map[string]any{"created_at": "2026-13-01"}, github.RejectedRun{ID: "9001",
			Reason: `created_at "2026-13-01" is not an RFC 3339 time`}},
		{"created_at missing", map[string]any{"created_at": nil}, github.RejectedRun{ID: "9001", Reason: "no created_at"}},
		{"run_started_at malformed", map[string]any{"run_started_at": "soon"}, github.RejectedRun{ID: "9001",
			Reason: `run_started_at "soon" is not an RFC 3339 time`}},
		{"unknown status", map[string]any{"status": "done"}, github.RejectedRun{ID: "9001", Reason: `status "done" is not a workflow run status`}},
		{"completed without conclusion", map[string]any{"conclusion": nil}, github.RejectedRun{ID: "9001",
			Reason: `completed with conclusion "", not a run conclusion`}},
		{"attempt out of range", map[string]any{"run_attempt": -1}, github.RejectedRun{ID: "9001", Reason: "run_attempt -1 is out of range (1 to 32767)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newListEnv(t)
			e.fake.AddRun(sweepRun(9000, listBase))
			bad := sweepRun(9001, listBase.Add(time.Hour))
			bad.Listed = c.listed
			e.fake.AddRun(bad)
			l, err := e.client.ListRunEntries(t.Context(), github.RunFilter{Workflow: "run-sweep.yml"})
			require.NoError(t, err)
			require.Equal(t, []int64{9000}, ids(l.Runs))
			require.Equal(t, []github.RejectedRun{c.want}, l.Rejected)
			_, err = e.client.ListRuns(t.Context(), github.RunFilter{Workflow: "run-sweep.yml"})
			require.ErrorContains(t, err, "malformed listing entries (1 in all), the first: "+c.want.String())
		})
	}
	// A run in progress is a run: kept, with its status.
	e := newListEnv(t)
	r := sweepRun(9002, listBase)
	r.Listed = map[string]any{"status": "in_progress", "conclusion": nil}
	e.fake.AddRun(r)
	l, err := e.client.ListRunEntries(t.Context(), github.RunFilter{Workflow: "run-sweep.yml"})
	require.NoError(t, err)
	require.Empty(t, l.Rejected)
	require.Equal(t, "in_progress", l.Runs[0].Status)
}
