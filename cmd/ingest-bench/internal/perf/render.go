package perf

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/inferencex/ingest/fixtures/generate"
)

// Formats are the output formats of Render.
func Formats() []string { return []string{"text", "md"} }

// kindRow is one row of the per-kind table.
type kindRow struct {
	kind  string
	stage string
	count func(Counts) int64
	// unit of the rate; bytes are shown in MB (10^6) and MB/s.
	unit  string
	bytes bool
}

func kindRows() []kindRow {
	return []kindRow{
		{"benchmark rows read", "benchmarks", func(c Counts) int64 { return c.BenchmarkRows }, "rows/s", false},
		{"benchmark points", "benchmarks", func(c Counts) int64 { return c.BenchmarkPoints }, "points/s", false},
		{"eval rows", "evals", func(c Counts) int64 { return c.EvalRows }, "rows/s", false},
		{"eval samples", "evals", func(c Counts) int64 { return c.EvalSamples }, "samples/s", false},
		{"AgentX rows", "traces", func(c Counts) int64 { return c.TraceRows }, "rows/s", false},
		{"AgentX traces", "traces", func(c Counts) int64 { return c.Traces }, "traces/s", false},
		{"trace records", "traces", func(c Counts) int64 { return c.TraceRecords }, "records/s", false},
		{"trace bytes", "traces", func(c Counts) int64 { return c.TraceBytes }, "MB/s", true},
		{"GPU-metric samples", "telemetry", func(c Counts) int64 { return c.TelemetrySamples }, "samples/s", false},
		{"power series", "telemetry", func(c Counts) int64 { return c.PowerSeries }, "series/s", false},
		{"changelog entries", "changelog", func(c Counts) int64 { return c.ChangelogEntries }, "", false},
	}
}

// Render prints the result as text (aligned columns) or md (Markdown
// tables, to paste into the README). Counts are the designed ones, which
// the checks compared with every report; a kind the runs do not hold is
// left out. Rates divide a count by the summed time of the stage that
// processes it.
func Render(w io.Writer, r *Result, format string) error {
	var b strings.Builder
	md := format == "md"
	if !md && format != "text" {
		return fmt.Errorf("format %q is not one of %v", format, Formats())
	}
	fmt.Fprintf(&b, "ingest-bench: %s\n", describe(r.Config))
	kept := "dropped"
	if r.Config.Keep {
		kept = "kept; trees in " + r.TreesDir
	}
	fmt.Fprintf(&b, "trees: %s artifacts, %s MB, generated in %s; database %s (%s)\n\n",
		group(int64(r.Artifacts)), mb(r.TreeBytes), secs(r.Generated), r.Database, kept)

	head := []string{"kind", "count", "stage"}
	for _, p := range r.Passes {
		head = append(head, p.Name+" pass")
	}
	rows := [][]string{head}
	for _, k := range kindRows() {
		n := k.count(r.Designed)
		if n == 0 {
			continue
		}
		count := group(n)
		if k.bytes {
			count = mb(n) + " MB"
		}
		row := []string{k.kind, count, k.stage}
		for _, p := range r.Passes {
			row = append(row, rate(n, p.Stages[k.stage], k.unit, k.bytes))
		}
		rows = append(rows, row)
	}
	commit := []string{"(commit)", "", "commit"}
	for _, p := range r.Passes {
		commit = append(commit, secs(p.Stages["commit"]))
	}
	rows = append(rows, commit)
	answered := []string{"(answered from the ledger)", "", "unchanged"}
	seen := false
	for _, p := range r.Passes {
		d, ok := p.Stages["unchanged"]
		seen = seen || ok
		answered = append(answered, secs(d))
	}
	if seen {
		rows = append(rows, answered)
	}
	table(&b, rows, md)
	b.WriteString("\n")

	rows = [][]string{{"pass", "wall (open + ingest)", "peak RSS", "peak live heap", "peak Go memory"}}
	for _, p := range r.Passes {
		rss := "n/a"
		if p.Memory.PeakRSS >= 0 {
			rss = mib(p.Memory.PeakRSS)
		}
		rows = append(rows, []string{p.Name, secs(p.Wall), rss, mib(int64(p.Memory.PeakLiveHeap)), mib(int64(p.Memory.PeakGoMemory))})
	}
	table(&b, rows, md)
	b.WriteString("\n")
	writeChecks(&b, r.Problems, "checks: every report adds up and matches the generator's manifest; the rerun wrote nothing new\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// describe names the configuration in one line, as the flags would.
func describe(c Config) string {
	g := c.Gen
	parts := []string{fmt.Sprintf("%d runs × %d points", c.Runs, g.Points)}
	if g.Retries > 0 {
		parts = append(parts, fmt.Sprintf("%d retried", g.Retries))
	}
	if g.Evals > 0 {
		docs := g.EvalDocs
		if docs == 0 {
			docs = generate.GSM8KDocs
		}
		parts = append(parts, fmt.Sprintf("%d evals × %d docs", g.Evals, docs))
	}
	if g.AgentX > 0 {
		s := fmt.Sprintf("%d AgentX traces", g.AgentX)
		if g.AgentXProfileBytes > 0 {
			s += fmt.Sprintf(" of %s MB", mb(g.AgentXProfileBytes))
		}
		parts = append(parts, s)
	}
	if g.Telemetry {
		s := "telemetry"
		if g.PowerAudits {
			s += " with power audits"
		}
		parts = append(parts, s)
	}
	if g.Zip {
		parts = append(parts, "zipped")
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (seed %d)", g.Seed)
}

func table(b *strings.Builder, rows [][]string, md bool) {
	if md {
		for i, r := range rows {
			b.WriteString("| " + strings.Join(r, " | ") + " |\n")
			if i == 0 {
				b.WriteString(strings.Repeat("|---", len(r)) + "|\n")
			}
		}
		return
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			if i > 0 {
				line.WriteString("  ")
			}
			line.WriteString(c + strings.Repeat(" ", widths[i]-len([]rune(c))))
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// rate is "1.23 s: 4 560 rows/s".
func rate(n int64, took time.Duration, unit string, bytes bool) string {
	if took <= 0 {
		return "—"
	}
	s := secs(took)
	if unit == "" {
		return s
	}
	per := float64(n) / took.Seconds()
	if bytes {
		return s + ": " + strconv.FormatFloat(per/1e6, 'f', 1, 64) + " " + unit
	}
	if per < 100 {
		return s + ": " + strconv.FormatFloat(per, 'f', 1, 64) + " " + unit
	}
	return s + ": " + group(int64(per+0.5)) + " " + unit
}

func secs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
}

func mb(n int64) string { return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) }

func mib(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB" }

// group writes n with a space between groups of three digits (12 345).
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 || len(s) <= 3 {
		return s
	}
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ' ')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// writeChecks ends a report with the outcome of its checks: ok when none
// failed, else every problem.
func writeChecks(b *strings.Builder, problems []string, ok string) {
	if len(problems) == 0 {
		b.WriteString(ok)
		return
	}
	fmt.Fprintf(b, "checks FAILED (%d):\n", len(problems))
	for _, p := range problems {
		fmt.Fprintf(b, "  - %s\n", p)
	}
}
