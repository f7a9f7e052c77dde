// Package backfill ingests many runs: a workflow's history from GitHub, a
// list of run ids, or a directory of downloaded run trees.
//
// Work is shared through PostgreSQL. Workers started with the same
// parameters join one pass (a row of backfills) and its queue (rows of
// backfill_runs). Each worker claims the oldest pending run with FOR UPDATE
// SKIP LOCKED in a transaction it holds while it ingests the run, and
// settles the run in that transaction. So any number of workers, on one
// machine or several, ingest each run once; a killed worker's connection
// closes, its transaction rolls back, and its run is pending again. There
// is no coordinator of our own.
//
// A run whose latest attempt the ledger shows ingested (succeeded or
// completed with failures) is skipped, unless the pass reingests; then only
// an ingest newer than the pass counts. A pass ends when nothing of it is
// pending; a failed run is retried by the next pass, not by this one.
package backfill
