// Package trace reads the raw side of AgentX points: it pairs benchmark
// files with their raw sibling artifacts, streams profile_export.jsonl and
// the server metrics export once to derive request statistics, per-second
// chart series and the request timeline, and reads server logs (including
// tarballs) for KV-cache capacity. It never holds a whole file in memory.
//
// Profile lines, replay records and chart series are decoded with
// goccy/go-json, the one place it stays (issue 29's measurement): on the
// sweep of every kind (ingest-bench -runs 3 -points 2000 -evals 4 -agentx 4
// -agentx-profile-bytes 20000000 -telemetry -zip, 240 MB of traces) the
// traces stage took 4.8 s with it and 6.6 s with encoding/json, and the
// sweep 27.2 s against 31.5 s, over its 30 s target.
package trace
