ALTER TABLE ingests ALTER COLUMN summary TYPE jsonb USING summary::jsonb;
DO $$
BEGIN
    ALTER TABLE ingests ALTER COLUMN summary SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available: the ledger keeps pglz';
END $$;
