package ingest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"

	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/stages/benchmarks"
	"github.com/inferencex/ingest/ingest/stages/changelog"
	"github.com/inferencex/ingest/ingest/stages/evals"
	"github.com/inferencex/ingest/ingest/stages/traces"
	"github.com/inferencex/ingest/ingest/trace"
	"github.com/inferencex/ingest/schema"
)

// ShadowWriter receives what the stages of an ingest would write: the eval
// rows and samples, the changelog, and the traces stage's staged streams
// (compressed blobs, log texts, payloads) and batch. `ingest compare` keeps
// them in memory; nothing reaches a database.
type ShadowWriter interface {
	evals.Writer
	changelog.Writer
	StageTraceChunks(ctx context.Context, next func() (schema.TraceChunk, bool, error)) (int64, error)
	ApplyTraces(ctx context.Context, a schema.TraceApply) (schema.TraceApplyResult, error)
}

// Shadow is a run as an ingest reads it, without a database: the run's
// identity, every staged copy of every benchmark point, the winning copy
// of each point as an ingest ranks them (benchmarks.Winners), the run
// stats, and the summary of what was read. Evals, the changelog and the
// traces stage's batch went to the ShadowWriter.
type Shadow struct {
	Start      schema.RunStart
	Benchmarks []schema.StagedBenchmark
	// Winners index Benchmarks, one per point in point-key-hash order; the
	// traces batch names the row of Winners[i] as RowID i+1.
	Winners  []int
	RunStats []schema.RunStat
	Summary  *schema.Summary
}

// ReadShadow reads tree exactly as Run does up to the store: the run's
// identity and metadata, the plan, the changelog, the quarantine, the
// benchmark stream, the run stats, the evals with their samples and the
// changelog rows, and the traces stage (its points the winners, its
// read-back of stored rows answered from them, nothing known as stored).
// The telemetry stage, which needs the stored rows, is not run. It writes
// nothing; cfg.DryRun is irrelevant.
func ReadShadow(ctx context.Context, cfg Config, tree *source.Tree, d Deps, w ShadowWriter) (*Shadow, error) {
	started := d.Now()
	sum := &schema.Summary{SchemaVersion: schema.SummarySchemaVersion, Run: cfg.Run, Target: cfg.Target, DryRun: true,
		StartedAt: started, Failures: []schema.Failure{}, Notes: []string{}}
	t := runstate.NewTally(sum)
	if tree.ListingErr != nil {
		return nil, fmt.Errorf("run tree listing: %w", tree.ListingErr)
	}
	start, err := runStart(cfg, tree, started, t)
	if err != nil {
		return nil, err
	}
	sum.Run = start.Run
	for _, p := range tree.Problems {
		t.Fail(schema.CategoryRun, p.Artifact, p.File, p.Reason)
	}
	p := runstate.NewPlan(tree)
	var records []*runstate.Record
	stage := benchmarks.New(d.stageDeps(), start.Run, start.Meta.HeadSHA, t, &records)
	cl := changelog.Read(p, start, t, &records)
	if cl.Log.EvalsOnly() {
		changelog.SkipForEvalsOnly(&p, t, &records, d.Log)
	}
	quarantined, err := runstate.ReadQuarantine(p, &records, &sum.Details)
	if err != nil {
		return nil, err
	}
	stage.SetQuarantine(quarantined)
	stage.SetEvidence(runstate.VerifyReceipt(tree, t))

	sh := &Shadow{Start: start, Summary: sum}
	// The stream's metrics maps are kept (never released to the
	// normalizer's pool): the compare holds every copy.
	bs := startBenchmarks(ctx, stage, p)
	for r := range bs.rows {
		sh.Benchmarks = append(sh.Benchmarks, r)
	}
	if err := <-bs.parsed; err != nil {
		return nil, fmt.Errorf("read benchmark files: %w", err)
	}
	bs.cancel()
	sh.RunStats = stage.ReadRunStats(p.RunStats)
	env := &runstate.Env{Deps: d.stageDeps(), Start: start, Tree: tree, Plan: p, Tally: t, Sum: sum, Log: d.Log.Named("ingest"),
		Records: &records, Changelog: cl, AgentX: stage.AgentX(), Quarantine: quarantined}
	counts, err := evals.Read(env).Write(ctx, w)
	if err != nil {
		return nil, fmt.Errorf("evals: %w", err)
	}
	sum.AddCounters(counts)
	counts, err = changelog.Run(ctx, w, env)
	if err != nil {
		return nil, fmt.Errorf("changelog: %w", err)
	}
	sum.AddCounters(counts)
	sh.Winners = winners(sh.Benchmarks)
	st := newShadowTraces(sh, w)
	env.Points = st.points
	if counts, err = traces.Run(ctx, st, env); err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	sum.AddCounters(counts)
	t.Close()
	return sh, nil
}

// winners picks the winning copy of every point as an ingest does (the
// benchmark stage's Winners, keyed by the hash of the point key as the
// store keys points), in point-key-hash order.
func winners(bs []schema.StagedBenchmark) []int {
	w := benchmarks.NewWinners()
	for i := range bs {
		k := bs[i].Key
		if k == "" {
			k = bs[i].Point.Key()
		}
		h := sha256.Sum256([]byte(k))
		c := schema.StagedCopy{Rank: bs[i].Rank(), Seq: int32(i)}
		copy(c.Point[:], h[:16])
		w.Add(c)
	}
	write := w.Result().Write
	out := make([]int, len(write))
	for i, seq := range write {
		out[i] = int(seq)
	}
	return out
}

// shadowTraces is the traces stage's Writer in a shadow read: the points
// are the winners, the stored rows they would be (row id i+1, no links),
// nothing is stored yet; what would be written goes to the ShadowWriter.
type shadowTraces struct {
	ShadowWriter
	points []schema.TracePoint
	links  map[string]schema.TraceRowLink
}

func newShadowTraces(sh *Shadow, w ShadowWriter) *shadowTraces {
	st := &shadowTraces{ShadowWriter: w, links: map[string]schema.TraceRowLink{}}
	replaced := map[string]bool{}
	for _, k := range trace.ServerMetricsReplaced() {
		replaced[k] = true
	}
	for i, bi := range sh.Winners {
		b := &sh.Benchmarks[bi]
		id := int64(i + 1)
		d := []byte(strconv.FormatInt(id, 10))
		st.points = append(st.points, schema.TracePoint{Digest: d, BenchmarkType: b.Point.BenchmarkType,
			Artifact: b.Source.Artifact, File: b.Source.File, IsAggregate: b.IsAggregate})
		metrics := b.StoredMetrics
		if metrics == nil {
			metrics = b.Point.Metrics
		}
		l := schema.TraceRowLink{RowID: id, Config: b.Point.Config, Metrics: map[string]float64{}}
		for _, k := range trace.ServerMetricInputs() {
			v, ok := metrics[k]
			if !ok {
				continue
			}
			if f, ok := v.(float64); ok {
				l.Metrics[k] = f
			} else if replaced[k] {
				l.OwnedOther = true
			}
		}
		st.links[string(d)] = l
	}
	return st
}

func (s *shadowTraces) TraceRowLinks(_ context.Context, digests [][]byte, _, _ []string) (map[string]schema.TraceRowLink, error) {
	out := make(map[string]schema.TraceRowLink, len(digests))
	for _, d := range digests {
		if l, ok := s.links[string(d)]; ok {
			out[string(d)] = l
		}
	}
	return out, nil
}

func (s *shadowTraces) KnownTraceDigests(context.Context, [][]byte, [][]byte, [][]byte, [][]byte, schema.TracePayloadVersions,
	[][]byte) (schema.TraceKnown, error) {
	return schema.TraceKnown{Sidecars: map[string]bool{}, ServerLogs: map[string]bool{}, Blobs: map[string]bool{},
		Stale: map[string]bool{}, LogTexts: map[string]bool{}}, nil
}
