-- The ledger's summaries (ingests.summary) are written once per ingest and
-- read back whole, decoded by the ingest; only ->/->> read inside them
-- (the publication's tree digest), which json has too. A run's impact
-- section with its eval evidence makes a summary large (500 evals: 165 KB,
-- against 6 KB without): as jsonb every ingest, and every rerun answered
-- from the ledger, paid for building the binary form when it wrote one and
-- for turning it back into text when it read one (about 25 ms at 165 KB);
-- the json type validates the same text and returns it as stored. ALTER
-- TYPE resets the column's compression, so lz4 (000009) is set again.
ALTER TABLE ingests ALTER COLUMN summary TYPE json USING summary::json;
DO $$
BEGIN
    ALTER TABLE ingests ALTER COLUMN summary SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available: the ledger keeps pglz';
END $$;
