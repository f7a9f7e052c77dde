-- A purged ingest wrote nothing of its run, as an aborted one did: the
-- older schema records it so, with the reason.
UPDATE ingests SET status = 'aborted', error = coalesce(error, 'purged by the run overrides') WHERE status = 'purged';
ALTER TABLE ingests DROP CONSTRAINT ingests_status_check;
ALTER TABLE ingests ADD CONSTRAINT ingests_status_check
    CHECK (status IN ('running', 'succeeded', 'completed_with_failures', 'aborted'));
