// Package report renders an ingest summary (schema.Summary) as the PR
// comment / job summary Markdown, the machine-readable JSON, a short console
// text, and the unmapped-entities.json file used by alerting. The contract is
// docs/report.md; everything here is rendered from the Summary alone.
package report
