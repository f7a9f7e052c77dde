// Package perf is the bench command: it generates runs holding every
// artifact kind the ingest reads (fixtures/generate), ingests them into a
// fresh database through the same path as `ingest load`, then ingests them
// again, and reports per kind what was processed and how fast, the wall
// time and the peak memory of each pass. It checks every report against
// what the generator says the run is designed to produce, so a figure is
// only printed for an ingest that did the right thing.
package perf

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/buildid"
	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/ingest/gctarget"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/schema"
)

// DefaultAdminURL is the server's maintenance database the bench creates
// its database through.
const DefaultAdminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Config says what to generate and where to ingest it.
type Config struct {
	// Runs is the number of run trees (≥ 1). Run i is generated with Gen,
	// seed Gen.Seed+i and run id (Gen.RunID or generate.DefaultRunID)+i, so
	// no two runs share a point, a trace or a sample.
	Runs int
	Gen  generate.Options
	// AdminURL connects to a database that may CREATE DATABASE; the bench
	// creates <DatabasePrefix><random> beside it and drops it at the end.
	AdminURL string
	// DatabasePrefix begins the name of every database the bench creates
	// (DefaultDatabasePrefix when empty); tests on a shared server pass
	// theirs.
	DatabasePrefix string
	// Keep leaves the database and the generated trees in place.
	Keep bool
	// Dir is where the trees are generated (default: the system's
	// temporary directory).
	Dir string
	// Log receives the ingest's own log lines.
	Log *zap.Logger
	// GC is the command's garbage-collection target (nil: none).
	GC *gctarget.Target
}

// Result is what a bench measured.
type Result struct {
	Config Config
	// Database is the name of the bench database; TreesDir the directory
	// of the run trees (both gone unless Config.Keep).
	Database, TreesDir string
	// Designed sums what the runs are designed to produce (the manifests).
	Designed Counts
	// Artifacts and TreeBytes are the size of the trees on disk;
	// Generated the time it took to write them.
	Artifacts int
	TreeBytes int64
	Generated time.Duration
	// Passes are the first ingest and the rerun.
	Passes []Pass
	// Problems are the checks that failed, one line each; a bench with
	// problems measured something other than a correct ingest.
	Problems []string
}

// Pass is one ingest of every run.
type Pass struct {
	Name string
	// Wall is the time from opening the first tree to the last ingest's
	// end (generation and database setup excluded).
	Wall time.Duration
	// Stages sums the stage times the pipeline reported (its "stage finished" log lines).
	Stages map[string]time.Duration
	Memory Memory
	// Counts sums what the pass's reports say (see Counts).
	Counts Counts
}

// Counts is what the runs hold, kind by kind. From a report, a count is
// what the pass processed: written new on the first pass, found unchanged
// on the rerun. The trace records and bytes are the generator's (the
// report does not count them); the telemetry samples and changelog
// entries of a report are those written, so they are zero on a rerun.
type Counts struct {
	BenchmarkRows    int64 `json:"benchmarkRows"`    // raw rows read (per-job files and aggregate)
	BenchmarkPoints  int64 `json:"benchmarkPoints"`  // rows written or unchanged
	EvalRows         int64 `json:"evalRows"`         // eval items read
	EvalSamples      int64 `json:"evalSamples"`      // samples lines read
	TraceRows        int64 `json:"traceRows"`        // AgentX rows the traces stage accounted for
	Traces           int64 `json:"traces"`           // of them with a raw trace, stored or unchanged
	TraceRecords     int64 `json:"traceRecords"`     // profile_export.jsonl records
	TraceBytes       int64 `json:"traceBytes"`       // profile_export.jsonl bytes
	TelemetrySamples int64 `json:"telemetrySamples"` // GPU-metric samples
	PowerSeries      int64 `json:"powerSeries"`      // telemetry series read
	ChangelogEntries int64 `json:"changelogEntries"`
}

func (c *Counts) addManifest(m generate.Manifest) {
	c.BenchmarkRows += int64(m.RawBenchmarkRows)
	c.BenchmarkPoints += int64(m.Points)
	c.EvalRows += int64(m.EvalRows)
	c.EvalSamples += int64(m.EvalSampleLines)
	c.TraceRows += int64(m.AgenticPoints)
	c.Traces += int64(m.AgentXTraces)
	c.TraceRecords += int64(m.AgentXProfileRecords)
	c.TraceBytes += m.AgentXProfileBytes
	c.TelemetrySamples += m.TelemetrySamples
	c.PowerSeries += int64(m.TelemetrySeries)
	c.ChangelogEntries += int64(m.ChangelogEntries)
}

func (c *Counts) addSummary(s *schema.Summary, m generate.Manifest) {
	c.BenchmarkRows += s.Stats.RawBenchmarkRows
	c.BenchmarkPoints += s.Rows.Benchmark.New + s.Rows.Benchmark.Duplicate
	c.EvalRows += s.Details.EvalRows
	c.EvalSamples += s.Details.EvalSampleLines
	c.TraceRows += s.Details.TraceRowsRead
	c.Traces += s.Rows.Trace.New + s.Rows.Trace.Duplicate
	c.TraceRecords += m.AgentXProfileRecords
	c.TraceBytes += m.AgentXProfileBytes
	c.TelemetrySamples += s.Stats.GPUMetricSamplesNew
	c.PowerSeries += s.Details.PowerSeriesRead
	c.ChangelogEntries += s.Stats.ChangelogEntriesWritten
}

// genRun is one generated run tree.
type genRun struct {
	dir string
	m   generate.Manifest
}

// Run generates the trees, creates and migrates the database, ingests
// every run twice and measures both passes. An error means the bench could
// not run; failed checks are Result.Problems.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Runs < 1 {
		return nil, fmt.Errorf("runs must be at least 1, got %d", cfg.Runs)
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.AdminURL == "" {
		cfg.AdminURL = DefaultAdminURL
	}
	res := &Result{Config: cfg}
	dir, err := os.MkdirTemp(cfg.Dir, "ingest-bench-")
	if err != nil {
		return nil, fmt.Errorf("trees directory: %w", err)
	}
	res.TreesDir = dir
	if !cfg.Keep {
		defer os.RemoveAll(dir)
	}
	started := time.Now()
	runs, err := generateRuns(dir, cfg)
	if err != nil {
		return nil, err
	}
	res.Generated = time.Since(started)
	for _, r := range runs {
		res.Designed.addManifest(r.m)
		res.Artifacts += r.m.Artifacts
	}
	if res.TreeBytes, err = treeBytes(dir); err != nil {
		return nil, err
	}

	res.Database = databaseName(cfg.DatabasePrefix, "") + randomSuffix()
	url, err := createDatabase(ctx, cfg.AdminURL, res.Database, "")
	if err != nil {
		return nil, err
	}
	if !cfg.Keep {
		defer func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if err := dropDatabase(ctx, cfg.AdminURL, res.Database); err != nil {
				cfg.Log.Warn("could not drop the bench database", zap.String("database", res.Database), zap.Error(err))
			}
		}()
	}
	st, err := store.Open(ctx, url, cfg.Log)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if _, _, err := st.MigrateUp(ctx); err != nil {
		return nil, err
	}
	for _, rerun := range []bool{false, true} {
		p, problems, err := ingestPass(ctx, cfg, st, res.Database, runs, rerun)
		if err != nil {
			return nil, err
		}
		res.Passes = append(res.Passes, p)
		res.Problems = append(res.Problems, problems...)
	}
	return res, nil
}

// generateRuns writes the run trees run-0, run-1, … under dir.
func generateRuns(dir string, cfg Config) ([]genRun, error) {
	base := cfg.Gen.RunID
	if base == 0 {
		base = generate.DefaultRunID
	}
	runs := make([]genRun, cfg.Runs)
	for i := range runs {
		opts := cfg.Gen
		opts.Seed += int64(i)
		opts.RunID = base + int64(i)
		runs[i].dir = filepath.Join(dir, fmt.Sprintf("run-%d", i))
		m, err := generate.Write(runs[i].dir, opts)
		if err != nil {
			return nil, fmt.Errorf("generate run %d: %w", opts.RunID, err)
		}
		runs[i].m = m
	}
	return runs, nil
}

// ingestPass ingests every run once, as `ingest load` does, and checks each
// report against its manifest.
func ingestPass(ctx context.Context, cfg Config, st *store.Store, database string, runs []genRun, rerun bool) (Pass, []string, error) {
	p := Pass{Name: "first", Stages: map[string]time.Duration{}}
	if rerun {
		p.Name = "rerun"
	}
	var mu sync.Mutex
	deps, err := loadDeps(cfg.Log)
	if err != nil {
		return p, nil, err
	}
	deps.LargeHeap = cfg.GC.LargeHeap
	deps.Store = ingest.AdaptStore[*store.RunTx](st)
	deps.Log = withStageTimes(deps.Log, func(stage string, took time.Duration) {
		mu.Lock()
		p.Stages[stage] += took
		mu.Unlock()
	})
	var problems []string
	probe := startMemory()
	started := time.Now()
	for _, r := range runs {
		sum, err := ingestTree(ctx, cfg.Log, deps, database, r.dir)
		if err != nil && sum == nil {
			probe.stop()
			return p, nil, err
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s pass, run %s: aborted: %v", p.Name, filepath.Base(r.dir), err))
			continue
		}
		for _, c := range check(sum, r.m, rerun) {
			problems = append(problems, fmt.Sprintf("%s pass, run %s: %s", p.Name, filepath.Base(r.dir), c))
		}
		p.Counts.addSummary(sum, r.m)
	}
	p.Wall = time.Since(started)
	p.Memory = probe.stop()
	return p, problems, nil
}

// ingestTree is `ingest load DIR`: open the tree, run the pipeline. A nil
// summary with an error means the tree could not be opened.
func ingestTree(ctx context.Context, log *zap.Logger, deps ingest.Deps, database, dir string) (*schema.Summary, error) {
	cfg := ingest.Config{Target: database, ToolVersion: "ingest-bench"}
	if deps.Build != nil {
		cfg.TreeDigest = source.StartDigest(ctx, dir) // as `ingest load` does
	}
	tree, err := source.Open(ctx, dir, log)
	if err != nil {
		return nil, err
	}
	defer tree.Close()
	return ingest.Run(ctx, cfg, tree, deps)
}

// loadDeps builds the collaborators `ingest load` builds without
// --catalog or --overrides: the embedded alias tables and run overrides.
func loadDeps(log *zap.Logger) (ingest.Deps, error) {
	cat, err := catalog.Load()
	if err != nil {
		return ingest.Deps{}, fmt.Errorf("catalog: %w", err)
	}
	ov, err := overrides.Load()
	if err != nil {
		return ingest.Deps{}, fmt.Errorf("overrides: %w", err)
	}
	id, err := buildid.Read()
	if err != nil {
		return ingest.Deps{}, fmt.Errorf("identify the binary: %w", err)
	}
	return ingest.Deps{Catalog: cat, Normalizer: benchmark.NewNormalizer(cat), Overrides: ov, Log: log, Now: time.Now, Build: id}, nil
}

func treeBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("trees directory: %w", err)
	}
	return n, nil
}

// DefaultDatabasePrefix begins the names of the bench's databases.
const DefaultDatabasePrefix = "ingest_bench_"

// databaseName is the start of a bench database's name: prefix (the
// default when empty), then kind ("floor_", "hist_" or "").
func databaseName(prefix, kind string) string {
	if prefix == "" {
		prefix = DefaultDatabasePrefix
	}
	return prefix + kind
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}
