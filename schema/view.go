package schema

import "time"

// LatestBenchmarksView is the dashboard's view the ingest keeps.
const LatestBenchmarksView = "latest_benchmarks"

// View refresh outcomes.
const (
	// RefreshRefreshed: the view was refreshed and shows every change.
	RefreshRefreshed = "refreshed"
	// RefreshSkipped: nothing changed since the last refresh.
	RefreshSkipped = "skipped"
	// RefreshFailed: the refresh failed; the view is stale until the next
	// ingest or `ingest refresh` succeeds.
	RefreshFailed = "failed"
)

// ViewRefresh is what one refresh of latest_benchmarks did.
type ViewRefresh struct {
	View   string `json:"view"`
	Status string `json:"status"`
	// Changes is the number of change marks the refresh took in.
	Changes    int64  `json:"changes"`
	DurationMS int64  `json:"durationMs"`
	Error      string `json:"error,omitempty"`
	// Curves is how many curves were recomputed; Added, Removed and
	// Moved count the rows the view gained, lost, and saw change snapshot.
	Curves  int64 `json:"curves,omitempty"`
	Added   int64 `json:"added,omitempty"`
	Removed int64 `json:"removed,omitempty"`
	Moved   int64 `json:"moved,omitempty"`
}

// ViewState is the refresh state of latest_benchmarks.
type ViewState struct {
	View string `json:"view"`
	// Stale is true while changes are not in the view yet.
	Stale          bool       `json:"stale"`
	PendingChanges int64      `json:"pendingChanges"`
	StaleSince     *time.Time `json:"staleSince,omitempty"`
	RefreshedAt    *time.Time `json:"refreshedAt,omitempty"`
	LastAttemptAt  *time.Time `json:"lastAttemptAt,omitempty"`
	LastDurationMS *int64     `json:"lastDurationMs,omitempty"`
	LastError      string     `json:"lastError,omitempty"`
	Rows           int64      `json:"rows"`
}
