package runstate

// Endings of notes that describe what an ingest replaced or removed of an
// earlier one. A rerun of the same inputs replaces nothing, so a rerun
// answered from the ledger leaves them out.
const (
	NoteSamplesReplaced  = " of an earlier ingest replaced: their samples files changed"
	NoteChangelogRemoved = " of an earlier ingest no longer in the changelog: removed"
)
