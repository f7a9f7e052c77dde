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
var stageOrder = []string{"unchanged", "benchmarks", "evals", "traces", "telemetry", "changelog", "curves", "impact", "commit"}

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
		walls := p.walls()
		row := []string{p.name, walls.spread(secs), p.peakRSS()}
		if r.Baseline != nil {
			bp := r.Baseline.phase(p.name)
			bw := bp.walls()
			row = append(row, bw.spread(secs), bp.peakRSS(), fmt.Sprintf("%.2f", float64(median(walls))/float64(max(median(bw), 1))))
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
	if len(r.Floors) > 0 {
		renderFloors(&b, r, md)
	}
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

// walls are the phase's wall times.
func (p phase) walls() durations {
	walls := make(durations, len(p.runs))
	for i, x := range p.runs {
		walls[i] = x.Wall
	}
	return walls
}

// spread is "median (min–max)".
func (d durations) spread(f func(time.Duration) string) string {
	if len(d) == 0 {
		return "—"
	}
	return fmt.Sprintf("%s (%s–%s)", f(median(d)), f(slices.Min(d)), f(slices.Max(d)))
}

// peakRSS is "median (max)" of the phase's peak RSS values that are the
// loads' own; a load whose peak was not clearly above the bench process's
// resident set (which the kernel counts in a child's peak), or whose bench
// resident set is unknown, is counted as not measured.
func (p phase) peakRSS() string {
	var own durations
	var parent int64
	for _, x := range p.runs {
		if x.RSSMeasured() {
			own = append(own, time.Duration(x.MaxRSS))
		} else {
			parent = max(parent, x.ParentRSS)
		}
	}
	unmeasured := len(p.runs) - len(own)
	switch {
	case unmeasured == 0:
		return own.peak()
	case len(own) == 0 && parent > 0:
		return fmt.Sprintf("not measured: at most %s, the bench's own", mib(parent+rssMargin))
	case len(own) == 0:
		return "not measured: the bench's own resident set is unknown"
	}
	return fmt.Sprintf("%s; %d of %d not measured", own.peak(), unmeasured, len(p.runs))
}

// peak is "median (max)" of peak RSS values.
func (d durations) peak() string {
	if len(d) == 0 {
		return "—"
	}
	return fmt.Sprintf("%s (%s)", mib(int64(median(d))), mib(int64(slices.Max(d))))
}

// floorShown is the least median time of a table's COPY for it to have a
// row of its own in the floor table; the rest are summed in "other tables".
const floorShown = 5 * time.Millisecond

// renderFloors prints the database floor: its median parts, the whole,
// and the first ingest against it.
func renderFloors(b *strings.Builder, r *ProcessResult, md bool) {
	fmt.Fprintf(b, "database floor: the rows each first ingest wrote, copied into a fresh database in one transaction "+
		"(binary COPY, every index, constraint and trigger in place), then latest_benchmarks refreshed; %d measurements\n\n", len(r.Floors))
	part := func(f func(Floor) time.Duration) durations {
		d := make(durations, len(r.Floors))
		for i, x := range r.Floors {
			d[i] = f(x)
		}
		return d
	}
	var names []string
	for _, f := range r.Floors {
		for _, t := range f.Tables {
			if !slices.Contains(names, t.Name) {
				names = append(names, t.Name)
			}
		}
	}
	tableTook := func(name string) func(Floor) time.Duration {
		return func(f Floor) time.Duration {
			for _, t := range f.Tables {
				if t.Name == name {
					return t.Took
				}
			}
			return 0
		}
	}
	rows := [][]string{{"part", "median (min–max)"}}
	var others []string
	for _, n := range names {
		if d := part(tableTook(n)); median(d) >= floorShown {
			rows = append(rows, []string{"COPY " + n, d.spread(secs)})
		} else {
			others = append(others, n)
		}
	}
	if len(others) > 0 {
		rows = append(rows, []string{fmt.Sprintf("COPY of %d other tables", len(others)), part(func(f Floor) time.Duration {
			var t time.Duration
			for _, n := range others {
				t += tableTook(n)(f)
			}
			return t
		}).spread(secs)})
	}
	total := part(Floor.Total)
	first := r.phase("first").walls()
	rows = append(rows,
		[]string{"COMMIT", part(func(f Floor) time.Duration { return f.Commit }).spread(secs)},
		[]string{"refresh of latest_benchmarks", part(func(f Floor) time.Duration { return f.Refresh }).spread(secs)},
		[]string{"floor, in all", total.spread(secs)},
		[]string{"first ingest (above) / floor", fmt.Sprintf("%.2f", float64(median(first))/float64(max(median(total), 1)))},
	)
	table(b, rows, md)
	b.WriteString("\n")
}
