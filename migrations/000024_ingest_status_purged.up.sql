-- An ingest of a run the run overrides purge writes nothing of the run
-- (and deletes what earlier ingests stored of it); its ledger row says so
-- with the status 'purged', so that the ledger shows every ingest.
ALTER TABLE ingests DROP CONSTRAINT ingests_status_check;
ALTER TABLE ingests ADD CONSTRAINT ingests_status_check
    CHECK (status IN ('running', 'succeeded', 'completed_with_failures', 'aborted', 'purged'));
