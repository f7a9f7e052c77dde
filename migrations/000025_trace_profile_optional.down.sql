-- The older schema requires a profile export: traces without one (adopted
-- from the reference) are unlinked from their rows and removed.
ALTER TABLE agentic_trace_replay DROP CONSTRAINT agentic_trace_replay_profile_size_check;
UPDATE benchmark_results SET trace_replay_id = NULL
WHERE trace_replay_id IN (SELECT id FROM agentic_trace_replay WHERE profile_export_digest IS NULL);
DELETE FROM agentic_trace_replay WHERE profile_export_digest IS NULL;
ALTER TABLE agentic_trace_replay ALTER COLUMN profile_export_digest SET NOT NULL;
ALTER TABLE agentic_trace_replay ALTER COLUMN profile_export_size SET NOT NULL;
