// Package weka reads an agentic trace corpus of the cc-traces-weka family
// (the datasets AgentX runs replay) from a local file: one conversation per
// line, as the dashboard's dataset loader receives each row, and computes
// what the dashboard's /datasets pages read (docs/dashboard-schema.md): a
// conversation's flamegraph structure and totals, the dataset's summary and
// chart data.
package weka
