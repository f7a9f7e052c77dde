package cli_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// verifyOutcome is `ingest verify --format json`.
type verifyOutcome struct {
	RunID  int64  `json:"runId"`
	Target string `json:"target"`
	OK     bool   `json:"ok"`
	Checks []struct {
		Check  string `json:"check"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
	} `json:"checks"`
}

func (v verifyOutcome) failed() map[string]string {
	out := map[string]string{}
	for _, c := range v.Checks {
		if !c.OK {
			out[c.Check] = c.Detail
		}
	}
	return out
}

func execAffected(t *testing.T, dbURL, sql string) int64 {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	tag, err := conn.Exec(t.Context(), sql)
	require.NoError(t, err)
	return tag.RowsAffected()
}

// TestVerify: the demo run, ingested twice into a staging target, reads
// back as its ledger says (counts, provenance, latest_benchmarks); each
// tampering by hand — a run_stats row deleted, a row's source artifact
// renamed, a point dropped from latest_benchmarks — is named and exits 1,
// and verify itself changes nothing.
func TestVerify(t *testing.T) {
	t.Parallel()
	staging := pgtest.New(t)
	vars := map[string]string{"DATABASE_WRITE_URL_STAGING": staging, "INGEST_TARGET": "staging"}
	demo := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(demo))
	requireCode(t, cli.ExitCompletedWithFailures, run(t, vars, "load", demo))
	requireCode(t, cli.ExitCompletedWithFailures, run(t, vars, "load", demo, "--reread"))

	verify := func() (verifyOutcome, result) {
		r := run(t, vars, "verify", "--run-id", "28485856738", "--format", "json")
		var v verifyOutcome
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &v), "%s", r)
		return v, r
	}
	v, r := verify()
	requireCode(t, cli.ExitOK, r)
	require.True(t, v.OK)
	require.Equal(t, "staging", v.Target)
	require.Len(t, v.Checks, 8)
	require.Empty(t, v.failed())
	text := run(t, vars, "verify", "--run-id", "28485856738")
	requireCode(t, cli.ExitOK, text)
	require.Contains(t, text.stdout, "Run 28485856738 in the staging database: verified\n")
	require.Contains(t, text.stdout, "ok        benchmark_results count: 12 stored, as the ingests reported writing")
	require.Contains(t, text.stdout, "ok        latest_benchmarks: serves 12 points of the run, as the curve rules do")

	require.Equal(t, int64(1), execAffected(t, staging, `DELETE FROM run_stats WHERE id = (SELECT min(id) FROM run_stats)`))
	require.Equal(t, int64(1), execAffected(t, staging, `UPDATE benchmark_results SET source_artifact = 'bmk_renamed' WHERE id = (SELECT min(id) FROM benchmark_results)`))
	require.Equal(t, int64(1), execAffected(t, staging, `DELETE FROM latest_benchmark_points WHERE result_id = (SELECT max(id) FROM latest_benchmarks)`))
	v, r = verify()
	requireCode(t, cli.ExitAborted, r)
	require.False(t, v.OK)
	require.Equal(t, map[string]string{
		"run_stats count":              "15 stored, the ingests reported writing 16",
		"benchmark_results provenance": "0 rows name no finished ingest of the run, 1 an artifact their ingest did not record",
	}, withoutKey(v.failed(), "latest_benchmarks"))
	require.Regexp(t, `^serves 11 points of the run, the curve rules 12: 1 missing \(ids \[\d+\]\), 0 not due`, v.failed()["latest_benchmarks"])
	// verify rolled its recompute back: the point is still missing.
	v, _ = verify()
	require.Contains(t, v.failed(), "latest_benchmarks")

	r = run(t, vars, "verify", "--run-id", "1")
	requireCode(t, cli.ExitAborted, r)
	require.Contains(t, r.stdout, "MISMATCH  ledger: no finished ingest of run 1 in the staging ledger")
	requireCode(t, cli.ExitUsage, run(t, vars, "verify"))
	requireCode(t, cli.ExitUsage, run(t, map[string]string{}, "verify", "--run-id", "1", "--target", "nowhere"))
}

func withoutKey(m map[string]string, key string) map[string]string {
	delete(m, key)
	return m
}
