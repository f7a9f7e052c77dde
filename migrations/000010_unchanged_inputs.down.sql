DROP INDEX ingests_data_xact_idx;
ALTER TABLE ingests
    DROP COLUMN unchanged_since,
    DROP COLUMN data_snapshot,
    DROP COLUMN data_xact,
    DROP COLUMN input_files,
    DROP COLUMN input_digest;

-- CASCADE drops the note_change trigger of every data table with it.
DROP FUNCTION note_data_change() CASCADE;
DROP TABLE data_changes;
