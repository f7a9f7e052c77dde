ALTER TABLE ingests
    ALTER COLUMN artifacts DROP DEFAULT,
    ALTER COLUMN artifacts TYPE jsonb USING artifacts::jsonb,
    ALTER COLUMN artifacts SET DEFAULT '[]'::jsonb;
DO $$
BEGIN
    ALTER TABLE ingests ALTER COLUMN artifacts SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available: the ledger keeps pglz';
END $$;
