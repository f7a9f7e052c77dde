// Package trace reads the raw side of AgentX points: it pairs benchmark
// files with their raw sibling artifacts, streams profile_export.jsonl and
// the server metrics export once to derive request statistics, per-second
// chart series and the request timeline, and reads server logs (including
// tarballs) for KV-cache capacity. It never holds a whole file in memory.
//
// Profile lines, replay records and chart series are decoded with
// goccy/go-json, the one place it stays: on the sweep of every kind its
// decoding keeps the traces stage and the sweep within their targets, which
// encoding/json does not (docs/performance.md, "Current figures").
package trace
