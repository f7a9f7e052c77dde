-- The ledger row of an ingest holds the run's artifact list with every
-- file digest (about 1.8 MB of JSON for a 5000-point run) and its summary.
-- lz4 compresses them several times faster than the default pglz, which
-- every ingest pays at its commit. Rows already stored keep their
-- compression; both read the same. A server built without lz4 keeps pglz.
DO $$
BEGIN
    ALTER TABLE ingests ALTER COLUMN artifacts SET COMPRESSION lz4,
                        ALTER COLUMN summary SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available: the ledger keeps pglz';
END $$;
