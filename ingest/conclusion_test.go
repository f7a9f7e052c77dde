package ingest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// A run stored without a conclusion is left out by the dashboard (its run
// list and availability read conclusion IS NOT NULL): the report says so
// and how to set it, and says nothing once one is stored.
func TestRunWithoutConclusionIsNoted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := demoTree(t)
	require.NoError(t, os.Remove(filepath.Join(dir, "artifacts.json")))
	run := schema.RunIdentity{SourceRunID: 28485856738, SourceRunAttempt: 2}
	noted := func(s *schema.Summary) bool {
		for _, n := range s.Notes {
			if strings.Contains(n, "has no conclusion") && strings.Contains(n, "--conclusion") {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		name       string
		conclusion string
		wantNote   bool
		stored     *string
	}{
		{"none given, none stored", "", true, nil},
		{"given", "success", false, ptr("success")},
		{"none given, one stored", "", false, ptr("success")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum, err := e.ingest(dir, ingest.Config{Run: run, Meta: schema.RunMeta{Conclusion: tc.conclusion}, Reread: true})
			require.NoError(t, err)
			require.Equal(t, tc.wantNote, noted(sum), "%q", sum.Notes)
			require.Equal(t, tc.wantNote, sum.Details.NoConclusion, "the report knows the run is hidden")
			var got *string
			require.NoError(t, e.pool().QueryRow(t.Context(),
				`SELECT conclusion FROM workflow_runs WHERE github_run_id = $1 AND run_attempt = 2`, run.SourceRunID).Scan(&got))
			require.Equal(t, tc.stored, got)
		})
	}
}

func ptr[T any](v T) *T { return &v }
