package perf

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// RenderHistory prints the history bench: per level, the median (min–max)
// of the first ingest, its update of latest_benchmarks, the refresh after
// its commit and the dashboard's reads, and each against the first level.
func RenderHistory(w io.Writer, r *HistoryResult, format string) error {
	var b strings.Builder
	md := format == "md"
	if !md && format != "text" {
		return fmt.Errorf("format %q is not one of %v", format, Formats())
	}
	fmt.Fprintf(&b, "ingest-bench -history: %s; %d × per level (a copy of the level's database, the run ingested as `ingest load` does, the dashboard's reads)\n",
		describe(Config{Runs: 1, Gen: r.Config.Gen}), r.Config.Repeat)
	fmt.Fprintf(&b, "stored runs: the same points as the measured run, one a day before it, analyzed\n\n")
	rows := [][]string{{"stored runs", "benchmark rows stored", "first ingest", "latest_benchmarks update (in its transaction)",
		"impact section", "refresh after the commit", "main read", "history read"}}
	for _, lv := range r.Levels {
		rows = append(rows, []string{strconv.Itoa(lv.Runs), group(lv.Rows), durations(lv.Ingest).spread(secs),
			durations(lv.Curves).spread(msecs), durations(lv.Impact).spread(msecs), durations(lv.Refresh).spread(msecs),
			fmt.Sprintf("%s, %s rows", durations(lv.MainRead).spread(msecs), group(int64(lv.MainRows))),
			fmt.Sprintf("%s, %s rows", durations(lv.HistoryRead).spread(msecs), group(int64(lv.HistoryRows)))})
	}
	table(&b, rows, md)
	if len(r.Levels) > 1 {
		b.WriteString("\n")
		base := r.Levels[0]
		rows = [][]string{{fmt.Sprintf("median against %d stored runs", base.Runs), "first ingest", "latest_benchmarks update",
			"impact section", "main read", "history read"}}
		for _, lv := range r.Levels[1:] {
			rows = append(rows, []string{fmt.Sprintf("%d stored runs", lv.Runs), ratio(lv.Ingest, base.Ingest),
				ratio(lv.Curves, base.Curves), ratio(lv.Impact, base.Impact), ratio(lv.MainRead, base.MainRead), ratio(lv.HistoryRead, base.HistoryRead)})
		}
		table(&b, rows, md)
	}
	b.WriteString("\n")
	writeChecks(&b, r.Problems, "checks: every ingest as designed, latest_benchmarks updated in its transaction and showing every point of the run\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func msecs(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
}

func ratio(a, b []time.Duration) string {
	return fmt.Sprintf("%.2f×", float64(median(a))/float64(max(median(b), 1)))
}
