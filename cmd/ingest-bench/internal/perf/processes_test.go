package perf

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// The process bench runs `ingest load` as separate processes (first,
// rerun and --reread, into a fresh database per repeat), checks every
// report, reads the stage times each process logged and measures the
// database floor of the binary measured. With a baseline binary every
// repeat loads the tree with both binaries, alternating which goes first
// (two repeats: each order once), and the report compares them side by
// side. The binary measured is the one the bench builds itself (Bin
// empty); the baseline is built here. One bench serves every assertion:
// the runs of the binary measured are the same whether or not a baseline
// runs beside them.
func TestRunProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the ingest binary")
	}
	base := filepath.Join(t.TempDir(), "ingest")
	out, err := exec.Command("go", "build", "-o", base, "github.com/inferencex/ingest/cmd/ingest").CombinedOutput()
	require.NoError(t, err, "%s", out)
	admin := pgtest.New(t) // a database of the test server that may CREATE DATABASE
	res, err := RunProcesses(context.Background(), ProcessConfig{
		Gen: generate.Options{Points: 30, Seed: 3, Evals: 3, EvalDocs: 2}, Repeat: 2, Floor: true, Baseline: base,
		AdminURL: admin, DatabasePrefix: pgtest.KindPrefix(t, "bench"), Dir: t.TempDir()})
	require.NoError(t, err)
	require.Empty(t, res.Problems)
	require.NotNil(t, res.Baseline)
	for _, bin := range []*ProcessRuns{&res.ProcessRuns, res.Baseline} {
		require.Len(t, bin.First, 2)
		require.Len(t, bin.Rerun, 2)
		require.Len(t, bin.Reread, 2)
		for k, runs := range [][]ProcessRun{bin.First, bin.Rerun, bin.Reread} {
			for _, r := range runs {
				require.Positive(t, r.Wall)
				require.Positive(t, r.MaxRSS)
				stages := []string{"benchmarks", "evals", "traces", "commit"}
				if k == 1 {
					stages = []string{"unchanged"} // answered from the ledger
					require.Equal(t, stages, stageKeys(r), "a rerun of either binary is answered from the ledger")
				} else {
					require.NotContains(t, r.Stages, "unchanged")
				}
				for _, s := range stages {
					require.Contains(t, r.Stages, s)
				}
				var sum time.Duration
				for _, d := range r.Stages {
					sum += d
				}
				require.Less(t, sum, r.Wall, "the stages run inside the process")
			}
		}
		for _, r := range bin.First {
			require.Positive(t, r.ParentRSS, "the bench's own resident set, read before each load")
		}
	}
	// The database floor copied every row the first ingest wrote, each
	// table after those it references, and refreshed the view: once per
	// repeat, for the binary measured only.
	require.Len(t, res.Floors, 2)
	m := res.Designed
	for _, f := range res.Floors {
		rows, at := map[string]int64{}, map[string]int{}
		for i, tb := range f.Tables {
			rows[tb.Name], at[tb.Name] = tb.Rows, i
			require.Positive(t, tb.Bytes)
			require.Positive(t, tb.Took)
		}
		require.EqualValues(t, m.Points, rows["benchmark_results"])
		require.EqualValues(t, m.EvalKeys, rows["eval_results"])
		require.EqualValues(t, m.EvalSampleLines, rows["eval_samples"])
		require.EqualValues(t, 1, rows["ingests"], "the first ingest's ledger row, not the reruns'")
		require.EqualValues(t, 1, rows["workflow_runs"])
		require.NotContains(t, rows, "data_changes", "filled by the triggers, not copied")
		for _, pair := range [][2]string{{"workflow_runs", "benchmark_results"}, {"configs", "benchmark_results"},
			{"ingests", "benchmark_results"}, {"eval_results", "eval_samples"}} {
			require.Contains(t, at, pair[0])
			require.Contains(t, at, pair[1])
			require.Less(t, at[pair[0]], at[pair[1]], "%s before the rows that reference it", pair[0])
		}
		require.Positive(t, f.Refresh)
		require.Greater(t, f.Total(), f.Refresh+f.Commit)
	}
	// A load whose peak is not clearly above the bench's own resident set
	// (the kernel counts it in the child's), or whose bench resident set
	// is unknown, is shown as not measured; the others keep their figures.
	for _, c := range []struct {
		runs []ProcessRun
		want string
	}{
		{[]ProcessRun{{MaxRSS: 57 << 20, ParentRSS: 18 << 20}, {MaxRSS: 60 << 20, ParentRSS: 18 << 20}}, "57.0 MiB (60.0 MiB)"},
		{[]ProcessRun{{MaxRSS: 19 << 20, ParentRSS: 18 << 20}, {MaxRSS: 40 << 20, ParentRSS: 18 << 20}, {MaxRSS: 44 << 20, ParentRSS: 18 << 20}},
			"40.0 MiB (44.0 MiB); 1 of 3 not measured"},
		{[]ProcessRun{{MaxRSS: 19 << 20, ParentRSS: 18 << 20}, {MaxRSS: 20 << 20, ParentRSS: 19 << 20}}, "not measured: at most 21.0 MiB, the bench's own"},
		{[]ProcessRun{{MaxRSS: 60 << 20}}, "not measured: the bench's own resident set is unknown"},
	} {
		require.Equal(t, c.want, phase{name: "first", runs: c.runs}.peakRSS())
	}

	// The report without a baseline, then with it.
	plain := *res
	plain.Baseline = nil
	for _, r := range []*ProcessResult{&plain, res} {
		var text strings.Builder
		require.NoError(t, RenderProcesses(&text, r, "md"))
		require.Contains(t, text.String(), "| first |")
		require.Contains(t, text.String(), "| floor, in all |")
		require.Contains(t, text.String(), "| first ingest (above) / floor |")
		require.Contains(t, text.String(), "| benchmarks |")
		require.Contains(t, text.String(), "every rerun wrote nothing new")
		if r.Baseline == nil {
			require.Contains(t, text.String(), "| ingest load | wall, median (min–max) | peak RSS, median (max) |\n")
			require.NotContains(t, text.String(), "baseline")
			continue
		}
		require.Contains(t, text.String(), "| ingest load | wall, median (min–max) | peak RSS, median (max) | baseline wall | baseline peak RSS | wall, this / baseline |")
		require.Contains(t, text.String(), "this build: go build ./cmd/ingest; baseline: "+base)
	}

	_, err = RunProcesses(context.Background(), ProcessConfig{Gen: res.Config.Gen, Repeat: 1, Bin: base,
		Baseline: filepath.Join(t.TempDir(), "missing"), AdminURL: admin, DatabasePrefix: pgtest.KindPrefix(t, "bench"), Dir: t.TempDir()})
	require.ErrorContains(t, err, "is not an ingest binary")
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{3}, 3},
		{[]time.Duration{5, 1, 3}, 3},
		{[]time.Duration{4, 1, 3, 2}, 2},
		{[]time.Duration{9, 9, 1, 1, 5}, 5},
	} {
		require.Equal(t, c.want, median(c.in), "%v", c.in)
	}
}

func stageKeys(r ProcessRun) []string {
	var keys []string
	for k := range r.Stages {
		keys = append(keys, k)
	}
	return keys
}
