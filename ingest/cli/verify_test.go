package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
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
	require.Len(t, v.Checks, 10)
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

// TestVerifyContent: verify recomputes every stored benchmark row's content
// digest from its key and values and counts every eval row's samples
// against the lines its ingest recorded, so a throughput changed by hand,
// a multiplied concurrency and a deleted sample are each named and exit 1.
func TestVerifyContent(t *testing.T) {
	t.Parallel()
	staging := pgtest.New(t)
	vars := map[string]string{"DATABASE_WRITE_URL_STAGING": staging, "INGEST_TARGET": "staging"}
	demo := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(demo))
	requireCode(t, cli.ExitCompletedWithFailures, run(t, vars, "load", demo))
	verify := func() (verifyOutcome, result) {
		r := run(t, vars, "verify", "--run-id", "28485856738", "--format", "json")
		var v verifyOutcome
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &v), "%s", r)
		return v, r
	}
	v, r := verify()
	requireCode(t, cli.ExitOK, r)
	require.Empty(t, v.failed())
	checks := map[string]string{}
	for _, c := range v.Checks {
		checks[c.Check] = c.Detail
	}
	require.Regexp(t, `^every one of \d+ rows hashes to its digest`, checks["benchmark_results content"])
	require.Regexp(t, `^every one of [1-9]\d* eval rows with a recorded samples file holds its \d+ samples`, checks["eval_samples count"])

	// Two rows whose stored values are what their digest hashed (no AgentX
	// or trace-linked rows), named as verify names a point.
	covered := `benchmark_type <> 'agentic_traces' AND trace_replay_id IS NULL AND server_log_id IS NULL`
	ids := queryInt64s(t, staging, `SELECT id FROM benchmark_results WHERE `+covered+` AND metrics ? 'tput_per_gpu' ORDER BY id LIMIT 2`)
	require.Len(t, ids, 2)
	require.Equal(t, int64(1), execAffected(t, staging, fmt.Sprintf(`UPDATE benchmark_results SET metrics = jsonb_set(metrics, '{tput_per_gpu}', '99999') WHERE id = %d`, ids[0])))
	require.Equal(t, int64(1), execAffected(t, staging, fmt.Sprintf(`UPDATE benchmark_results SET conc = conc * 1000 + 1 WHERE id = %d`, ids[1])))
	require.Equal(t, int64(1), execAffected(t, staging, `DELETE FROM eval_samples WHERE id = (SELECT min(id) FROM eval_samples)`))
	tput := queryStrings(t, staging, `SELECT concat_ws(' ', c.model, c.precision, c.hardware, c.framework, b.benchmark_type,
		coalesce(b.isl || '/' || b.osl, '-'), 'conc', b.conc, 'offload', b.offload_mode)
		FROM benchmark_results b JOIN configs c ON c.id = b.config_id WHERE b.id = ANY($1) ORDER BY b.id`, ids)
	require.Len(t, tput, 2)
	evalKey := queryStrings(t, staging, `SELECT concat_ws(' ', c.model, c.precision, c.hardware, c.framework, e.task, 'conc', coalesce(e.conc::text, '-')) || ': ' || count(s.id) || ' samples stored, ' || e.samples_lines || ' recorded'
		FROM eval_results e JOIN configs c ON c.id = e.config_id LEFT JOIN eval_samples s ON s.eval_result_id = e.id
		GROUP BY c.id, e.id HAVING count(s.id) <> e.samples_lines`)
	require.Len(t, evalKey, 1)

	v, r = verify()
	requireCode(t, cli.ExitAborted, r)
	failed := v.failed()
	require.Len(t, failed, 2, "%v", failed)
	require.Contains(t, failed["benchmark_results content"], "2 of ")
	for _, k := range tput {
		require.Contains(t, failed["benchmark_results content"], k)
	}
	require.Contains(t, failed["eval_samples count"], evalKey[0])
	text := run(t, vars, "verify", "--run-id", "28485856738")
	requireCode(t, cli.ExitAborted, text)
	require.Contains(t, text.stdout, "MISMATCH  benchmark_results content: 2 of ")
	require.Contains(t, text.stdout, "MISMATCH  eval_samples count: 1 of ")
}
