package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/inferencex/ingest/ingest/wording"
	"github.com/inferencex/ingest/schema"
)

// ViewStatus renders the refresh state of the dashboard's materialized
// views for `ingest status` and `ingest refresh`.
func ViewStatus(w io.Writer, views []schema.ViewState) error {
	var b strings.Builder
	b.WriteString("Materialized views\n")
	for _, v := range views {
		state := "fresh"
		if v.Stale {
			state = fmt.Sprintf("STALE: %s not shown yet", wording.Plural(int(v.PendingChanges), "change", "changes"))
			if v.StaleSince != nil {
				state += " (since " + stamp(*v.StaleSince) + " UTC)"
			}
		}
		fmt.Fprintf(&b, "%s  %s, %s", v.View, state, wording.Plural(int(v.Rows), "row", "rows"))
		if v.RefreshedAt != nil {
			fmt.Fprintf(&b, ", refreshed %s UTC", stamp(*v.RefreshedAt))
		}
		if v.LastDurationMS != nil {
			fmt.Fprintf(&b, ", last refresh took %d ms", *v.LastDurationMS)
		}
		b.WriteString("\n")
		if v.LastError != "" {
			fmt.Fprintf(&b, "  last refresh failed at %s UTC: %s\n", stampPtr(v.LastAttemptAt), plainInline(v.LastError))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func stampPtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return stamp(*t)
}

// viewRefreshLine is the console report's line on the update of
// latest_benchmarks the ingest made (and the refresh after its commit).
func viewRefreshLine(v schema.ViewRefresh) string {
	switch v.Status {
	case schema.RefreshRefreshed:
		what := wording.Plural(int(v.Changes), "change", "changes")
		if v.Curves > 0 {
			what += ", " + wording.Plural(int(v.Curves), "curve", "curves")
		}
		return fmt.Sprintf("%s refreshed in %d ms (%s)", v.View, v.DurationMS, what)
	case schema.RefreshSkipped:
		return v.View + " unchanged: refresh skipped"
	case schema.RefreshFailed:
		return v.View + " refresh FAILED: the view is stale until the next ingest or `ingest refresh` (" + plainInline(v.Error) + ")"
	}
	// An outcome of an older build (a summary read back from the ledger).
	return v.View + " not refreshed (" + plainInline(v.Status) + ")"
}
