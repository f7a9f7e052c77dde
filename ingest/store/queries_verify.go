package store

// The reads of `ingest verify` (Store.ReadBackRun). $1 is the repository,
// $2 the source run id.

// qVerifyIngests lists the run's finished ingests, oldest first.
const qVerifyIngests = `
SELECT summary FROM ingests
WHERE repo = $1 AND github_run_id = $2 AND status IN ('succeeded', 'completed_with_failures') AND summary IS NOT NULL
ORDER BY id`

// qVerifyTable counts, for one table holding a run's rows (%[1]s), the
// rows of the run, those whose ingest is not a finished ingest of the run,
// and those whose source artifact is not among that ingest's records.
const qVerifyTable = `
SELECT count(*),
       count(*) FILTER (WHERE i.id IS NULL),
       count(*) FILTER (WHERE i.id IS NOT NULL AND NOT EXISTS (
           SELECT 1 FROM json_array_elements(i.artifacts) a WHERE a->>'name' = t.source_artifact))
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
