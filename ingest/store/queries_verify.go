package store

// The reads of `ingest verify` (Store.ReadBackRun). $1 is the repository,
// $2 the source run id.

// qVerifyIngests lists the run's finished ingests, oldest first.
const qVerifyIngests = `
SELECT summary FROM ingests
WHERE repo = $1 AND github_run_id = $2 AND status IN ('succeeded', 'completed_with_failures') AND summary IS NOT NULL
ORDER BY id`

// qVerifyAdopted says whether the ledger holds the adopt's row of the run
// (target 'adopted', store.Adopt).
const qVerifyAdopted = `
SELECT EXISTS (SELECT 1 FROM ingests WHERE repo = $1 AND github_run_id = $2 AND target = ` + adoptedTarget + ` AND status = 'succeeded')`

// qVerifyTable counts, for one table holding a run's rows (%[1]s), the
// rows of the run, those whose ingest is not a finished ingest of the run,
// those whose source artifact is not among that ingest's records, and the
// rows the adopt took over (their ingest the adopt's ledger row, which
// records no artifacts: their source artifact is 'adopted', or the one an
// ingest of the run since found them in).
const qVerifyTable = `
SELECT count(*),
       count(*) FILTER (WHERE i.id IS NULL),
       count(*) FILTER (WHERE i.id IS NOT NULL AND i.target <> ` + adoptedTarget + ` AND NOT EXISTS (
           SELECT 1 FROM json_array_elements(i.artifacts) a WHERE a->>'name' = t.source_artifact)),
       count(*) FILTER (WHERE i.target = ` + adoptedTarget + `)
FROM %[1]s t
JOIN workflow_runs w ON w.id = t.workflow_run_id
LEFT JOIN ingests i ON i.id = t.ingest_id AND i.repo = w.repo AND i.github_run_id = w.github_run_id
     AND i.status IN ('succeeded', 'completed_with_failures')
WHERE w.repo = $1 AND w.github_run_id = $2`

// qVerifyOverridesApplied says whether an `ingest overrides apply` changed
// stored rows of the run ($1: the run id only).
const qVerifyOverridesApplied = `
SELECT to_regclass('public.override_applications') IS NOT NULL AND EXISTS (
    SELECT 1 FROM override_applications o, jsonb_array_elements(coalesce(o.result->'actions', '[]'::jsonb)) a
    WHERE o.changed AND (a->>'runId')::bigint = $1 AND (a->>'rows')::bigint > 0)`

// qVerifyShown lists the run's rows latest_benchmarks serves.
const qVerifyShown = `
SELECT l.id FROM latest_benchmarks l
JOIN workflow_runs w ON w.id = l.workflow_run_id
WHERE w.repo = $1 AND w.github_run_id = $2
ORDER BY l.id`

// qVerifyContent reads every benchmark row of the run whose content digest
// covers its stored values, with its key, as the stager hashed them (see
// contentDigest): not AgentX rows (their stored metrics are derived from
// the hashed input), rows linked to a trace replay or server log (the
// traces stage adds derived keys to their metrics) or rows whose digest a
// migration cleared. The last column counts the rows left out.
var qVerifyContent = `
SELECT ` + configColumnsOf("c") + `,
	b.benchmark_type, b.isl, b.osl, b.conc, b.offload_mode, b.recipe_fingerprint, to_char(b.date, 'YYYY-MM-DD'),
	b.image, b.metrics::text, b.workers::text, b.power_invalid_reasons::text, b.power_audit::text, b.content_digest,
	to_jsonb(b) ->> 'kv_transfer_lib'
FROM benchmark_results b
JOIN workflow_runs w ON w.id = b.workflow_run_id
JOIN configs c ON c.id = b.config_id
WHERE w.repo = $1 AND w.github_run_id = $2 AND ` + contentCovered + `
ORDER BY b.id`

// qVerifyContentDerived counts the run's benchmark rows qVerifyContent
// leaves out.
var qVerifyContentDerived = `
SELECT count(*) FROM benchmark_results b
JOIN workflow_runs w ON w.id = b.workflow_run_id
WHERE w.repo = $1 AND w.github_run_id = $2 AND NOT (` + contentCovered + `)`

// contentCovered holds for a benchmark row b whose stored values are the
// ones its content digest hashed. A row adopt took over carries a digest
// of the reference's values by the adopt's own formula (store.Adopt),
// which is not recomputed here.
var contentCovered = `b.benchmark_type <> 'agentic_traces' AND b.trace_replay_id IS NULL
	AND b.server_log_id IS NULL AND length(b.content_digest) > 0
	AND NOT ` + adoptedRow("b")

// qVerifySamples lists, per eval row of the run with a recorded samples
// file, its key, the samples it holds and the lines its ingest recorded.
const qVerifySamples = `
SELECT c.model, c.precision, c.hardware, c.framework, e.task, e.conc,
	(SELECT count(*) FROM eval_samples s WHERE s.eval_result_id = e.id), e.samples_lines
FROM eval_results e
JOIN workflow_runs w ON w.id = e.workflow_run_id
JOIN configs c ON c.id = e.config_id
WHERE w.repo = $1 AND w.github_run_id = $2 AND e.samples_lines IS NOT NULL AND e.source_artifact <> 'adopted'
ORDER BY e.id`
