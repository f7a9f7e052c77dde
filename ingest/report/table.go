package report

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/inferencex/ingest/schema"
)

// tableGrid is the report table as cells: a header line, then exactly the
// four rows benchmark, eval, trace and power.
func tableGrid(r schema.Rows) [][]string {
	grid := [][]string{{"Category", "new", "duplicate", "skipped", "unmapped", "failed"}}
	rows := []struct {
		category schema.Category
		counts   schema.Counts
	}{
		{schema.CategoryBenchmark, r.Benchmark},
		{schema.CategoryEval, r.Eval},
		{schema.CategoryTrace, r.Trace},
		{schema.CategoryPower, r.Power},
	}
	for _, row := range rows {
		c := row.counts
		grid = append(grid, []string{
			string(row.category),
			strconv.FormatInt(c.New, 10),
			strconv.FormatInt(c.Duplicate, 10),
			strconv.FormatInt(c.Skipped, 10),
			strconv.FormatInt(c.Unmapped, 10),
			strconv.FormatInt(c.Failed, 10),
		})
	}
	return grid
}

// TextTable is the report table as aligned plain text, each line after
// indent: the table of the text report, of `ingest status --run-id` and
// of a backfill's totals.
func TextTable(r schema.Rows, indent string) string {
	var b strings.Builder
	grid := tableGrid(r)
	widths := columnWidths(grid)
	for _, cells := range grid {
		for i, cell := range cells {
			cells[i] = pad(cell, widths[i])
		}
		b.WriteString(indent + strings.TrimRight(strings.Join(cells, "  "), " ") + "\n")
	}
	return b.String()
}

// columnWidths is the widest cell of every column of grid, in runes.
func columnWidths(grid [][]string) []int {
	var widths []int
	for _, line := range grid {
		for i, cell := range line {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	return widths
}

// pad left-aligns cell in a field of width runes.
func pad(cell string, width int) string {
	return cell + strings.Repeat(" ", max(0, width-utf8.RuneCountInString(cell)))
}

// statsLine is the eleven counters of the stats line, in the order of
// docs/report.md: "benchmarkFiles 9, rawBenchmarkRows 16, …".
func statsLine(st schema.Stats) string {
	counters := []struct {
		name  string
		value int64
	}{
		{"benchmarkFiles", st.BenchmarkFiles},
		{"rawBenchmarkRows", st.RawBenchmarkRows},
		{"coveredByPerJobFiles", st.CoveredByPerJobFiles},
		{"purgedPoints", st.PurgedPoints},
		{"failedRunRows", st.FailedRunRows},
		{"runStatsNew", st.RunStatsNew},
		{"runStatsDuplicate", st.RunStatsDuplicate},
		{"evalSamplesNew", st.EvalSamplesNew},
		{"gpuMetricSamplesNew", st.GPUMetricSamplesNew},
		{"powerPublicationPoints", st.PowerPublicationPoints},
		{"changelogEntriesWritten", st.ChangelogEntriesWritten},
	}
	parts := make([]string, len(counters))
	for i, c := range counters {
		parts[i] = c.name + " " + strconv.FormatInt(c.value, 10)
	}
	return strings.Join(parts, ", ")
}
