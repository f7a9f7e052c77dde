// Package promotion compares the inputs of an ingest into production with
// those of the staged ingest of the same source run: the digest of the run
// tree and the ledger's artifact records. Its answer is the report's
// publication section ("same inputs as staged ingest #N", or what differs,
// artifact by artifact).
package promotion
