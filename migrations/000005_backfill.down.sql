DROP TABLE IF EXISTS backfill_runs;
DROP TABLE IF EXISTS backfills;
