package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/schema"
)

// RunTx is the single transaction one ingest writes its run in. Nothing it
// writes is visible to others before Commit, and Rollback leaves the
// database exactly as it was.
type RunTx struct {
	tx    pgx.Tx
	start schema.RunStart
	run   schema.WrittenRun
	log   *zap.Logger
	// known holds the content digests the run's rows already have.
	known map[digest]struct{}
	// adopted are the run's rows an adopt took over, read when it has rows.
	adopted adoptedPoints
	// staged is how many benchmark rows PostgreSQL received.
	staged int64
	// sets are the staged rows' distinct configs and availability.
	sets *runSets
	// evalsStaged is set once the eval staging tables exist.
	evalsStaged bool
	opts        Options
	// inputDigest is recorded in the ledger row (SetInputDigest), with
	// the data stamps.
	inputDigest []byte
	inputFiles  []byte
	// dataSnapshot is the snapshot taken once the run's lock is held,
	// before anything is read: what the run's outcome may depend on. The
	// ledger records it, so a transaction committed after it — even while
	// this one ran — counts as a later change.
	dataSnapshot string
	// curvesUpdated is set once UpdateLatestBenchmarks has recomputed
	// curves: CurveImpact reads its scratch tables.
	curvesUpdated bool
}

// SetInputDigest gives the digest of the run's inputs, which Finish
// records with the data the run saw, so that a rerun with the same inputs
// can answer from this ingest while nothing else has written since. nil
// records none.
func (t *RunTx) SetInputDigest(d, files []byte) { t.inputDigest, t.inputFiles = d, files }

// BeginRun opens the run's transaction: it waits for the run's advisory
// lock (so a concurrent ingest of the same run finishes first), writes the
// workflow run row, opens the ledger row and creates the staging tables.
// Uncontended, that is two round trips after BEGIN; a wait for the lock is
// logged every lockLogEvery and bounded by the lock timeout.
func (s *Store) BeginRun(ctx context.Context, start schema.RunStart) (*RunTx, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin run transaction: %w", err)
	}
	t := &RunTx{tx: tx, start: start, opts: s.opts,
		log: s.log.With(zap.Int64("run_id", start.Run.SourceRunID), zap.Int("attempt", start.Run.SourceRunAttempt))}
	if err := t.begin(ctx); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, err
	}
	return t, nil
}

func (t *RunTx) begin(ctx context.Context) error {
	if err := t.lockRun(ctx); err != nil {
		return err
	}
	st, m := t.start, t.start.Meta
	var runStarted *time.Time
	if !m.RunStartedAt.IsZero() {
		v := m.RunStartedAt.UTC()
		runStarted = &v
	}
	b := &pgx.Batch{}
	b.Queue(qUpsertWorkflowRun, st.Run.Repo, st.Run.SourceRunID, st.Run.SourceRunAttempt,
		m.Name, st.NameIsFallback, null(m.Event), null(m.Status), null(m.Conclusion),
		null(m.HeadSHA), null(m.HeadBranch), null(m.HTMLURL), m.CreatedAt.UTC(), st.CreatedAtIsFallback, runStarted)
	b.Queue(qFastToast)
	for _, q := range qStagingTables {
		b.Queue(q)
	}
	b.Queue(qRunDigests, st.Run.SourceRunID, st.Run.SourceRunAttempt)
	b.Queue(qDataSnapshot)
	res := t.tx.SendBatch(ctx, b)
	defer res.Close()
	if err := res.QueryRow().Scan(&t.run.WorkflowRunID, &t.run.Date, &t.run.NoConclusion); err != nil {
		return t.explain(fmt.Sprintf("write workflow run %d attempt %d", st.Run.SourceRunID, st.Run.SourceRunAttempt), err)
	}
	if _, err := res.Exec(); err != nil {
		return t.explain("choose the compression of long values", err)
	}
	for range qStagingTables {
		if _, err := res.Exec(); err != nil {
			return t.explain("create staging tables", err)
		}
	}
	rows, err := res.Query()
	if err != nil {
		return t.explain("read stored digests", err)
	}
	stored, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return t.explain("read stored digests", err)
	}
	t.known = make(map[digest]struct{}, len(stored))
	for _, d := range stored {
		var k digest
		copy(k[:], d)
		t.known[k] = struct{}{}
	}
	if err := res.QueryRow().Scan(&t.dataSnapshot); err != nil {
		return t.explain("take the data snapshot", err)
	}
	if err := res.Close(); err != nil {
		return t.explain("begin run", err)
	}
	err = t.tx.QueryRow(ctx, qInsertLedgerRunning, st.Run.Repo, st.Run.SourceRunID, st.Run.SourceRunAttempt,
		nullInt64(st.Run.MergeRunID), nullInt(st.Run.MergeRunAttempt), t.run.WorkflowRunID, st.Target,
		st.StartedAt.UTC(), st.ToolVersion).Scan(&t.run.IngestID)
	if err != nil {
		return t.explain("open ledger row", err)
	}
	return nil
}

// explain names the statement an error (a timeout above all) struck in.
func (t *RunTx) explain(what string, err error) error { return t.opts.explain(what, err) }

// Run is the workflow run row and ledger row this transaction writes under.
func (t *RunTx) Run() schema.WrittenRun { return t.run }

// StageBenchmarks streams rows into the staging table with COPY. next is
// called until it reports no more rows; parsing can therefore run while
// PostgreSQL receives earlier rows, and memory stays flat however large the
// run. A row is encoded before next is called again, and not used after.
// seen (when set) is told of each row as it is staged, with its digests,
// for the caller to decide which copy of each point wins. It returns how
// many rows were staged.
func (t *RunTx) StageBenchmarks(ctx context.Context, next func() (schema.StagedBenchmark, bool, error), seen func(schema.StagedCopy)) (int64, error) {
	t.sets = newRunSets()
	if len(t.known) > 0 && t.adopted == nil {
		a, err := t.loadAdoptedPoints(ctx)
		if err != nil {
			return 0, err
		}
		t.adopted = a
	}
	src := &benchmarkSource{next: next, date: t.run.Date, known: t.known, adopted: t.adopted, seen: seen, sets: t.sets}
	n, err := t.tx.CopyFrom(ctx, pgx.Identifier{"stage_benchmark"}, stagingColumns, src)
	t.staged = n
	if err != nil {
		return n, t.explain("stage benchmark rows", err)
	}
	return n, nil
}

// Apply writes everything staged: configs, the benchmark results staged
// as write (their seq, one winner per point in point-key order, as the
// caller ranked them), availability and run stats, in one round trip.
func (t *RunTx) Apply(ctx context.Context, stats []schema.RunStat, write, adopted []int32) (schema.ApplyResult, error) {
	var r schema.ApplyResult
	b := &pgx.Batch{}
	sets := t.sets
	if sets == nil {
		sets = newRunSets()
	}
	if len(sets.configs) > 0 {
		b.Queue(qInsertConfigs, sets.configArgs()...)
	}
	for _, seq := range write {
		if seq < 0 || int64(seq) >= t.staged {
			return r, fmt.Errorf("write benchmark results: row %d was not staged (%d rows)", seq, t.staged)
		}
	}
	switch {
	case len(write) == 0:
	case len(t.known) == 0:
		b.Queue(qInsertBenchmarks, t.run.WorkflowRunID, t.run.Date, t.run.IngestID, rankBySeq(write, t.staged), int32(len(write)))
	default:
		b.Queue(qUpsertBenchmarks, t.run.WorkflowRunID, t.run.Date, t.run.IngestID, write)
	}
	if len(adopted) > 0 {
		b.Queue(qAdoptedProvenance, t.run.WorkflowRunID, adopted)
	}
	if len(sets.avail) > 0 {
		b.Queue(qInsertAvailability, append([]any{t.run.Date}, sets.availabilityArgs()...)...)
	}
	if len(stats) > 0 {
		cl, hw, src, file := make([]string, len(stats)), make([]string, len(stats)), make([]string, len(stats)), make([]string, len(stats))
		ok, total := make([]int32, len(stats)), make([]int32, len(stats))
		for i, s := range stats {
			cl[i], hw[i], src[i], file[i] = s.Cluster, s.Hardware, s.Source.Artifact, s.Source.File
			ok[i], total[i] = int32(s.NSuccess), int32(s.Total)
		}
		b.Queue(qUpsertRunStats, t.run.WorkflowRunID, t.run.Date, cl, hw, ok, total, src, file, t.run.IngestID)
	}
	res := t.tx.SendBatch(ctx, b)
	defer res.Close()
	if len(sets.configs) > 0 {
		tag, err := res.Exec()
		if err != nil {
			return r, t.explain("write configs", err)
		}
		r.ConfigsNew = tag.RowsAffected()
	}
	if len(write) > 0 {
		if err := res.QueryRow().Scan(&r.BenchmarkNew, &r.BenchmarkUpdated); err != nil {
			return r, t.explain("write benchmark results", err)
		}
	}
	r.BenchmarkStaged = t.staged
	if len(adopted) > 0 {
		if _, err := res.Exec(); err != nil {
			return r, t.explain("record the provenance of adopted rows", err)
		}
	}
	if len(sets.avail) > 0 {
		tag, err := res.Exec()
		if err != nil {
			return r, t.explain("write availability", err)
		}
		r.AvailabilityNew = tag.RowsAffected()
	}
	if len(stats) > 0 {
		var staged int64
		if err := res.QueryRow().Scan(&staged, &r.RunStatsNew); err != nil {
			return r, t.explain("write run stats", err)
		}
		r.RunStatsDuplicate = staged - r.RunStatsNew
	}
	if err := res.Close(); err != nil {
		return r, t.explain("apply run", err)
	}
	return r, nil
}

// Finish records the summary in the ledger row and commits — or, for a dry
// run, rolls everything back so the run leaves no trace.
func (t *RunTx) Finish(ctx context.Context, s *schema.Summary, artifacts json.RawMessage, dryRun bool) error {
	s.IngestID = t.run.IngestID
	sum, err := json.Marshal(s)
	if err != nil {
		return t.explain("encode summary", err)
	}
	if artifacts == nil {
		artifacts = json.RawMessage("[]")
	}
	b := &pgx.Batch{}
	b.Queue(qGenericPlan)
	b.Queue(qFinishLedger, t.run.IngestID, string(s.Status), s.FinishedAt.UTC(),
		s.Details.DurationMS, sum, []byte(artifacts), nil, t.inputDigest, t.inputFiles, t.dataSnapshot)
	if err := t.tx.SendBatch(ctx, b).Close(); err != nil {
		return t.explain("close ledger row", err)
	}
	if dryRun {
		if err := t.tx.Rollback(ctx); err != nil {
			return t.explain("roll back dry run", err)
		}
		return nil
	}
	if err := t.tx.Commit(ctx); err != nil {
		return t.explain("commit run", err)
	}
	return nil
}

// Rollback abandons the transaction. It is safe after Finish.
func (t *RunTx) Rollback(ctx context.Context) error {
	err := t.tx.Rollback(context.WithoutCancel(ctx))
	if errors.Is(err, pgx.ErrTxClosed) {
		return nil
	}
	return err
}

func null(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nullInt64(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}

func nullInt(v int) *int32 {
	if v == 0 {
		return nil
	}
	x := int32(v)
	return &x
}

// rankBySeq gives each of staged rows (by seq) its rank among the winners
// write lists in point-key order, from 1; 0 for a row not written.
func rankBySeq(write []int32, staged int64) []int32 {
	rank := make([]int32, staged)
	for i, seq := range write {
		rank[seq] = int32(i + 1)
	}
	return rank
}
