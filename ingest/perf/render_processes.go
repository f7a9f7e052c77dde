package perf

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// stageOrder is the order the pipeline runs its stages in; a stage not
// listed (a new one) follows in name order.
var stageOrder = []string{"unchanged", "benchmarks", "evals", "traces", "telemetry", "changelog", "commit"}

// RenderProcesses prints the process bench: the median (min–max) wall
// time and peak RSS of the first ingests and the reruns, then the median
// time of every stage.
func RenderProcesses(w io.Writer, r *ProcessResult, format string) error {
	var b strings.Builder
	md := format == "md"
	if !md && format != "text" {
		return fmt.Errorf("format %q is not one of %v", format, Formats())
	}
	fmt.Fprintf(&b, "ingest-bench -processes: %s; %d × (fresh database, `ingest load` first, then again, then again with --reread)\n",
		describe(Config{Runs: 1, Gen: r.Config.Gen}), r.Config.Repeat)
	fmt.Fprintf(&b, "tree: %s artifacts, %s MB\n\n", group(int64(r.Artifacts)), mb(r.TreeBytes))

	if r.Baseline != nil {
		bin := r.Config.Bin
		if bin == "" {
			bin = "go build ./cmd/ingest"
		}
		fmt.Fprintf(&b, "this build: %s; baseline: %s (each repeat loads with both; the baseline goes first in repeats 1, 3, …)\n\n",
			bin, r.Config.Baseline)
	}
	rows := [][]string{{"ingest load", "wall, median (min–max)", "peak RSS, median (max)"}}
	if r.Baseline != nil {
		rows[0] = append(rows[0], "baseline wall", "baseline peak RSS", "wall, this / baseline")
	}
	for _, p := range r.phases() {
		walls, rss := p.stats()
		row := []string{p.name, walls.spread(secs), rss.peak()}
		if r.Baseline != nil {
			bw, brss := r.Baseline.phase(p.name).stats()
			row = append(row, bw.spread(secs), brss.peak(), fmt.Sprintf("%.2f", float64(median(walls))/float64(max(median(bw), 1))))
		}
		rows = append(rows, row)
	}
	table(&b, rows, md)
	b.WriteString("\n")

	rows = [][]string{{"stage", "first, median", "rerun, median", "rerun --reread, median"}}
	for _, s := range stageNames(r) {
		rows = append(rows, []string{s, secs(medianStage(r.First, s)), secs(medianStage(r.Rerun, s)), secs(medianStage(r.Reread, s))})
	}
	table(&b, rows, md)
	b.WriteString("\n")
	writeChecks(&b, r.Problems, "checks: every report matches the generator's manifest; every rerun wrote nothing new; "+
		"every plain rerun was answered from the ledger, every --reread one read in full\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func stageNames(r *ProcessResult) []string {
	seen := map[string]bool{}
	for _, runs := range [][]ProcessRun{r.First, r.Rerun, r.Reread} {
		for _, x := range runs {
			for s := range x.Stages {
				seen[s] = true
			}
		}
	}
	var out []string
	for _, s := range stageOrder {
		if seen[s] {
			out = append(out, s)
			delete(seen, s)
		}
	}
	var rest []string
	for s := range seen {
		rest = append(rest, s)
	}
	slices.Sort(rest)
	return append(out, rest...)
}

func medianStage(runs []ProcessRun, stage string) time.Duration {
	ds := make([]time.Duration, len(runs))
	for i, x := range runs {
		ds[i] = x.Stages[stage]
	}
	return median(ds)
}

// phase is one kind of `ingest load` of a binary: its runs.
type phase struct {
	name string
	runs []ProcessRun
}

func (r *ProcessRuns) phases() []phase {
	return []phase{{"first", r.First}, {"rerun", r.Rerun}, {"rerun --reread", r.Reread}}
}

func (r *ProcessRuns) phase(name string) phase {
	for _, p := range r.phases() {
		if p.name == name {
			return p
		}
	}
	return phase{name: name}
}

// durations are measurements of one phase (RSS kept as a Duration so that
// median serves both).
type durations []time.Duration

// stats are the phase's wall times and peak RSS values.
func (p phase) stats() (walls, rss durations) {
	walls, rss = make(durations, len(p.runs)), make(durations, len(p.runs))
	for i, x := range p.runs {
		walls[i], rss[i] = x.Wall, time.Duration(x.MaxRSS)
	}
	return walls, rss
}

// spread is "median (min–max)".
func (d durations) spread(f func(time.Duration) string) string {
	if len(d) == 0 {
		return "—"
	}
	return fmt.Sprintf("%s (%s–%s)", f(median(d)), f(slices.Min(d)), f(slices.Max(d)))
}

// peak is "median (max)" of peak RSS values.
func (d durations) peak() string {
	if len(d) == 0 {
		return "—"
	}
	return fmt.Sprintf("%s (%s)", mib(int64(median(d))), mib(int64(slices.Max(d))))
}
