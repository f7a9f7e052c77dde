-- The ledger's artifact records (ingests.artifacts) are written once per
-- ingest and read back whole; nothing queries inside them by index.
-- As jsonb, every ingest paid for building the binary form of about
-- 1.8 MB of JSON (a 5000-point run) in its commit: about 50-70 ms, the
-- json type validates the same text in about 25. The records keep their
-- JSON operators (->, ->>, json_array_elements). ALTER TYPE resets the
-- column's compression, so lz4 (000009) is set again.
ALTER TABLE ingests
    ALTER COLUMN artifacts DROP DEFAULT,
    ALTER COLUMN artifacts TYPE json USING artifacts::json,
    ALTER COLUMN artifacts SET DEFAULT '[]'::json;
DO $$
BEGIN
    ALTER TABLE ingests ALTER COLUMN artifacts SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available: the ledger keeps pglz';
END $$;
