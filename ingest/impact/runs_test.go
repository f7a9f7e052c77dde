package impact_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/inferencex/ingest/ingest/stages/benchmarks"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/impact"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// pt is one generated benchmark row: its arm, point and the values the
// impact section compares (tput_per_gpu, median_intvty, p90_e2el; output
// throughput is 40 % of tput_per_gpu, TTFT a tenth of p90 E2EL).
type pt struct {
	agentic bool
	isl     int // fixed-seq: 1024 unless set
	tp      int // 8 unless set
	offload string
	conc    int
	tput    float64
	intvty  float64
	e2el    float64
}

// genRun is one generated run.
type genRun struct {
	id         int64
	day        int
	appendOnly bool
	points     []pt
}

func (p pt) row() schema.BenchmarkPoint {
	tp, offload := p.tp, p.offload
	if tp == 0 {
		tp = 8
	}
	if offload == "" {
		offload = "off"
	}
	img := "img:1"
	bp := schema.BenchmarkPoint{
		Config: schema.Config{Hardware: "b200", Framework: "sglang", Model: "dsr1", Precision: "fp8", SpecMethod: "none",
			PrefillTP: tp, PrefillEP: 1, DecodeTP: tp, DecodeEP: 1, NumPrefillGPU: tp, NumDecodeGPU: tp},
		BenchmarkType: schema.BenchmarkSingleTurn, Conc: p.conc, OffloadMode: offload, Image: &img,
		Metrics: map[string]any{"tput_per_gpu": p.tput, "output_tput_per_gpu": p.tput * 0.4, "median_intvty": p.intvty,
			"p90_e2el": p.e2el, "median_ttft": p.e2el / 10},
	}
	if p.agentic {
		bp.BenchmarkType = schema.BenchmarkAgenticTraces
	} else {
		isl, osl := p.isl, 1024
		if isl == 0 {
			isl = 1024
		}
		bp.ISL, bp.OSL = &isl, &osl
	}
	return bp
}

func (r genRun) start() schema.RunStart {
	created := time.Date(2026, 11, r.day, 8, 0, 0, 0, time.UTC)
	return schema.RunStart{
		Run:       schema.RunIdentity{Repo: "o/r", SourceRunID: r.id, SourceRunAttempt: 1},
		Meta:      schema.RunMeta{Name: "Run Sweep", CreatedAt: created, RunStartedAt: created.Add(time.Minute)},
		Target:    "test",
		StartedAt: created,
	}
}

// ingestRun writes r as an ingest does, updates latest_benchmarks and
// computes the impact in its transaction, then commits.
func ingestRun(t *testing.T, st *store.Store, r genRun) *schema.Impact {
	t.Helper()
	ctx := context.Background()
	tx, err := st.BeginRun(ctx, r.start())
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	rows := make([]schema.StagedBenchmark, len(r.points))
	for i, p := range r.points {
		rows[i] = schema.StagedBenchmark{Point: p.row(), Source: schema.Provenance{Artifact: "bmk", File: fmt.Sprintf("r%d.json", i)}}
	}
	i := 0
	win := benchmarks.NewWinners()
	_, err = tx.StageBenchmarks(ctx, func() (schema.StagedBenchmark, bool, error) {
		if i == len(rows) {
			return schema.StagedBenchmark{}, false, nil
		}
		i++
		return rows[i-1], true, nil
	}, win.Add)
	require.NoError(t, err)
	_, err = tx.Apply(ctx, nil, win.Result().Write, nil)
	require.NoError(t, err)
	_, _, err = tx.WriteChangelog(ctx, []schema.ChangelogRow{{MergeRunID: r.id, MergeRunAttempt: 1, BaseRef: "a", HeadRef: "b",
		ConfigKeys: []string{"k"}, Description: "d", AppendOnly: r.appendOnly}})
	require.NoError(t, err)
	view, err := tx.UpdateLatestBenchmarks(ctx)
	require.NoError(t, err)
	curves, err := tx.CurveImpact(ctx)
	require.NoError(t, err)
	imp, err := impact.Compute(curves, view)
	require.NoError(t, err)
	require.NoError(t, tx.Finish(ctx, &schema.Summary{Status: schema.StatusSucceeded, FinishedAt: time.Now()}, json.RawMessage(`[]`), false))
	return imp
}

// golden compares v, as indented JSON, with testdata/name.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}

func itoa(n int) string { return fmt.Sprint(n) }
