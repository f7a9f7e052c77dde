// Package ingest is the pipeline: it reads one run's artifact tree,
// normalizes every row, and writes the run in one transaction through the
// store, producing the Summary the report is rendered from.
//
// Stages, in order: classify artifacts → order attempts → stream benchmark
// files through the normalizer into the store's staging table → parse run
// stats → apply (one winner per point, dedupe against the database) →
// finish (ledger row, commit or, for a dry run, roll back).
//
// The stages live in their own packages under ingest/stages (benchmarks,
// evals, traces, telemetry, changelog), each declaring the Writer it needs;
// what they share of one run is in ingest/runstate. Imports flow one way:
// pipeline → stages → runstate → formats → schema (docs/architecture.md;
// layout_test.go enforces it).
package ingest
