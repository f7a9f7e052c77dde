package report

import (
	"fmt"
	"io"
	"strings"
	"time"

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
			state = fmt.Sprintf("STALE: %s not shown yet", plural(int(v.PendingChanges), "change", "changes"))
			if v.StaleSince != nil {
				state += " (since " + stamp(*v.StaleSince) + " UTC)"
			}
		}
		fmt.Fprintf(&b, "%s  %s, %s", v.View, state, plural(int(v.Rows), "row", "rows"))
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
