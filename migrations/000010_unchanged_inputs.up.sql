-- A rerun whose inputs are unchanged answers from the ledger instead of
-- re-reading the run (see docs/architecture.md, "Unchanged reruns"). It may
-- do so only when nothing in the data changed since the ingest it answers
-- from: every statement that writes a table the ingest reads or writes
-- notes its transaction here, from a trigger, in the writer's own
-- transaction (a rollback removes the note with the change). Notes are
-- inserts keyed by transaction, so concurrent writers never wait on each
-- other. The ledger (ingests), the backfill queue and the view bookkeeping
-- are not data and are not noted.
CREATE TABLE data_changes (
    xact       xid8        PRIMARY KEY,
    changed_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION note_data_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO data_changes (xact) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

-- Statement-level, without transition tables: a COPY of millions of
-- samples costs one note. A statement that changed no row is noted too,
-- which only makes a rerun re-read when it need not have.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY[
        'workflow_runs', 'configs', 'benchmark_results', 'availability', 'run_stats',
        'eval_results', 'eval_sample_texts', 'eval_samples', 'changelog_entries',
        'trace_blobs', 'trace_blob_chunks', 'agentic_trace_replay', 'server_logs', 'server_log_files',
        'run_datasets', 'gpu_metric_series', 'gpu_metric_samples', 'benchmark_result_gpu_metrics']
    LOOP
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I
            FOR EACH STATEMENT EXECUTE FUNCTION note_data_change()', t || '_note_change', t);
    END LOOP;
END $$;

-- What the ledger keeps to recognise an unchanged rerun: the digest of the
-- ingest's inputs (the tree, the build, the catalog and override files, the
-- run identity), and the data it saw: its own transaction and the snapshot
-- taken as it began (once it held the run's lock), so that a transaction
-- committed while it ran counts as a later change. A change is a noted
-- transaction other than its own, and other than another run's ingest,
-- that the snapshot does not see. An ingest answered from an earlier one
-- (unchanged_since) carries that one's digest, transaction and snapshot.
ALTER TABLE ingests
    ADD COLUMN input_digest    bytea,
    ADD COLUMN input_files     bytea,
    ADD COLUMN data_xact       xid8,
    ADD COLUMN data_snapshot   pg_snapshot,
    ADD COLUMN unchanged_since bigint REFERENCES ingests (id);

-- input_files is the index of the tree's files as hashed (each file's size,
-- times, inode, device and sha256): a rerun hashes again only the files
-- whose metadata changed, as git's index does. Paths compress well.
DO $$
BEGIN
    ALTER TABLE ingests ALTER COLUMN input_files SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available: input_files keeps pglz';
END $$;

-- A noted transaction that is another run's ingest does not make a rerun
-- read in full (store/queries_unchanged.go): found by its transaction.
CREATE INDEX ingests_data_xact_idx ON ingests (data_xact) WHERE unchanged_since IS NULL;
