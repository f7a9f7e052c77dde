package cli_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestAgentXRunSupersedesEveryArm states the AgentX curve rule of the
// reference's migration 014 end to end, on generated runs: an AgentX run
// supersedes every topology and offload variant of its curve (model,
// hardware, framework, precision). The second run's AgentX points are
// disaggregated over prefill and decode workers with KV offload to DRAM,
// the first run's one aggregated engine without offload; once both are
// loaded, latest_benchmarks shows the second run's AgentX points only.
func TestAgentXRunSupersedesEveryArm(t *testing.T) {
	t.Parallel()
	first, m := genTree(t, generate.Options{Points: 1, Seed: 31, RunID: 940001, AgentX: 2})
	second, _ := genTree(t, generate.Options{Points: 1, Seed: 31, RunID: 940002, AgentX: 2, AgentXOtherArm: true})
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db, "INGEST_REPO": runTestRepo, "INGEST_TARGET": "production"}
	requireCode(t, cli.ExitOK, run(t, vars, "load", first, "--run-date", "2026-11-01"))

	const agentx = `SELECT w.github_run_id::text || ' ' || c.disagg::text || ' ' || lb.offload_mode || ' ' || lb.conc::text
		FROM latest_benchmarks lb JOIN workflow_runs w ON w.id = lb.workflow_run_id JOIN configs c ON c.id = lb.config_id
		WHERE lb.benchmark_type = 'agentic_traces' ORDER BY 1`
	require.Len(t, queryStrings(t, db, agentx), m.AgenticPoints)
	require.Equal(t, []string{"940001 false off 4", "940001 false off 4"}, queryStrings(t, db, agentx), "the first run's arm")

	// Dated later, in another arm of the same curves: it supersedes them.
	requireCode(t, cli.ExitOK, run(t, vars, "load", second, "--run-date", "2026-11-02", "--coverage-guard", "warn"))
	require.Equal(t, []string{"940002 true on 4", "940002 true on 4"}, queryStrings(t, db, agentx),
		"the later AgentX run replaces every arm of its curves")
}
