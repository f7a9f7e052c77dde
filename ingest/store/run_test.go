package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"github.com/inferencex/ingest/ingest/stages/benchmarks"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

func intp(v int) *int { return &v }

func testPoint(conc int, tput float64) schema.BenchmarkPoint {
	return schema.BenchmarkPoint{
		Config: schema.Config{Hardware: "b200", Framework: "sglang", Model: "qwen3.5", Precision: "fp8", SpecMethod: "none",
			PrefillTP: 8, PrefillEP: 1, DecodeTP: 8, DecodeEP: 1, NumPrefillGPU: 8, NumDecodeGPU: 8},
		BenchmarkType: schema.BenchmarkSingleTurn, ISL: intp(8192), OSL: intp(1024), Conc: conc, OffloadMode: "off",
		Metrics: map[string]any{"tput_per_gpu": tput},
	}
}

func start(runID int64) schema.RunStart {
	return schema.RunStart{
		Run:       schema.RunIdentity{Repo: "o/r", SourceRunID: runID, SourceRunAttempt: 1},
		Meta:      schema.RunMeta{Name: "Run Sweep", CreatedAt: time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)},
		Target:    "test",
		StartedAt: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC),
	}
}

// iterate feeds rows to StageBenchmarks or StageEvalSamples.
func iterate[T any](rows []T) func() (T, bool, error) {
	i := 0
	return func() (T, bool, error) {
		if i == len(rows) {
			var none T
			return none, false, nil
		}
		i++
		return rows[i-1], true, nil
	}
}

// applied is what the store wrote of a run and how the benchmark stage
// ranked its copies.
type applied struct {
	schema.ApplyResult
	rank benchmarks.Ranking
}

// duplicate is how many winners the store had already.
func (a applied) duplicate() int64 { return a.rank.Winners - a.BenchmarkNew }

func ingestOnce(t *testing.T, st *store.Store, rows []schema.StagedBenchmark, stats []schema.RunStat) applied {
	t.Helper()
	ctx := context.Background()
	tx, err := st.BeginRun(ctx, start(42))
	require.NoError(t, err)
	win := benchmarks.NewWinners()
	n, err := tx.StageBenchmarks(ctx, iterate(rows), win.Add)
	require.NoError(t, err)
	require.EqualValues(t, len(rows), n)
	rank := win.Result()
	res, err := tx.Apply(ctx, stats, rank.Write, rank.Adopted)
	require.NoError(t, err)
	sum := &schema.Summary{Status: schema.StatusSucceeded, FinishedAt: time.Now()}
	require.NoError(t, tx.Finish(ctx, sum, json.RawMessage(`[]`), false))
	rank.Write = nil
	return applied{res, rank}
}

func TestApplyRanksPointsAndIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.New(t), zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()

	src := func(a string) schema.Provenance { return schema.Provenance{Artifact: a, File: "agg.json"} }
	rows := []schema.StagedBenchmark{
		// point conc 4: per-job (stale attempt rank 1), per-job newest (rank 0), aggregate copy.
		{Point: testPoint(4, 1), Source: src("bmk_old"), AttemptRank: 1},
		{Point: testPoint(4, 2), Source: src("bmk_new"), AttemptRank: 0},
		{Point: testPoint(4, 3), Source: src("results_bmk"), IsAggregate: true},
		// point conc 8: only in the aggregate.
		{Point: testPoint(8, 4), Source: src("results_bmk"), IsAggregate: true},
	}
	stats := []schema.RunStat{{Cluster: "b200-dgxc", Hardware: "b200", NSuccess: 3, Total: 4, Source: src("run-stats")}}
	res := ingestOnce(t, st, rows, stats)
	require.Equal(t, schema.ApplyResult{BenchmarkStaged: 4, BenchmarkNew: 2,
		ConfigsNew: 1, AvailabilityNew: 1, RunStatsNew: 1}, res.ApplyResult)
	require.Equal(t, benchmarks.Ranking{Staged: 4, Winners: 2, Covered: 1, Stale: 1}, res.rank)

	var tput float64
	var artifact string
	require.NoError(t, st.Pool().QueryRow(ctx,
		`SELECT (metrics->>'tput_per_gpu')::float8, source_artifact FROM benchmark_results WHERE conc = 4`).Scan(&tput, &artifact))
	require.Equal(t, 2.0, tput, "the newest per-job attempt wins")
	require.Equal(t, "bmk_new", artifact)

	again := ingestOnce(t, st, rows, stats)
	require.Equal(t, schema.ApplyResult{BenchmarkStaged: 4, RunStatsDuplicate: 1}, again.ApplyResult)
	require.Equal(t, benchmarks.Ranking{Staged: 4, Winners: 2, Covered: 1, Stale: 1}, again.rank)
	require.EqualValues(t, 2, again.duplicate())

	// A changed value for an existing point is a duplicate that is refreshed.
	rows[1].Point.Metrics = map[string]any{"tput_per_gpu": 2.5}
	changed := ingestOnce(t, st, rows, stats)
	require.EqualValues(t, 2, changed.duplicate())
	require.EqualValues(t, 1, changed.BenchmarkUpdated)
}

// TestFirstIngestWritesIDsInPointKeyOrder: a run's first ingest gives its
// rows ids in the order of their point keys' hashes, whatever order the
// rows were staged in (the order the parser's workers happened to send
// them), and writes each distinct config and availability entry once.
func TestFirstIngestWritesIDsInPointKeyOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.New(t), zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()

	type point struct {
		hw   string
		conc int
		isl  *int
	}
	var rows []schema.StagedBenchmark
	for _, hw := range []string{"h100", "b200"} {
		for _, conc := range []int{64, 1, 16, 4, 2} {
			for _, isl := range []*int{intp(1024), nil} {
				p := testPoint(conc, float64(conc))
				p.Config.Hardware, p.ISL = hw, isl
				rows = append(rows, schema.StagedBenchmark{Point: p, Source: schema.Provenance{Artifact: "bmk_" + hw, File: "f.json"}})
			}
		}
	}
	// A stale copy of one point, staged first: it must not take an id.
	stale := rows[3]
	stale.AttemptRank = 1
	stale.Point.Metrics = map[string]any{"tput_per_gpu": -1.0}
	rows = append([]schema.StagedBenchmark{stale}, rows...)

	res := ingestOnce(t, st, rows, nil)
	require.Equal(t, schema.ApplyResult{BenchmarkStaged: 21, BenchmarkNew: 20, ConfigsNew: 2, AvailabilityNew: 4}, res.ApplyResult)
	require.EqualValues(t, 1, res.rank.Stale)

	want := make([]schema.StagedBenchmark, len(rows)-1)
	copy(want, rows[1:])
	hash := func(r schema.StagedBenchmark) []byte { h := sha256.Sum256([]byte(r.Point.Key())); return h[:16] }
	slices.SortFunc(want, func(a, b schema.StagedBenchmark) int { return bytes.Compare(hash(a), hash(b)) })

	got, err := st.Pool().Query(ctx, `SELECT c.hardware, b.conc, b.isl, (b.metrics->>'tput_per_gpu')::float8
		FROM benchmark_results b JOIN configs c ON c.id = b.config_id ORDER BY b.id`)
	require.NoError(t, err)
	var order []point
	for got.Next() {
		var p point
		var tput float64
		require.NoError(t, got.Scan(&p.hw, &p.conc, &p.isl, &tput))
		require.Equal(t, float64(p.conc), tput, "the stale copy was written")
		order = append(order, p)
	}
	require.NoError(t, got.Err())
	require.Len(t, order, len(want))
	for i, w := range want {
		require.Equal(t, point{w.Point.Config.Hardware, w.Point.Conc, w.Point.ISL}, order[i], "row %d by id", i)
	}
}
