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
	// winners ranks the staged benchmark rows (StageBenchmarks); staged
	// is how many rows PostgreSQL received.
	winners *winners
	staged  int64
	// sets are the staged rows' distinct configs and availability.
	sets *runSets
	// evalsStaged is set once the eval staging tables exist.
	evalsStaged bool
	opts        Options
	// inputDigest is recorded in the ledger row (SetInputDigest), with
	// the data stamps, when the schema has their columns (recordInputs).
	inputDigest  []byte
	inputFiles   []byte
	recordInputs bool
	// hasDatasets: the schema has the datasets table (migration 17).
	hasDatasets bool
	// hasKVTransferLib: benchmark_results has kv_transfer_lib (migration 26).
	hasKVTransferLib bool
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
	if t.recordInputs, err = s.recordsInputs(ctx); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, err
	}
	if t.hasDatasets, err = s.hasDatasets(ctx); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, err
	}
	if t.hasKVTransferLib, err = s.hasKVTransferLib(ctx); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, err
	}
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
	if t.recordInputs {
		b.Queue(qDataSnapshot)
	}
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
	t.known = map[digest]struct{}{}
	for rows.Next() {
		var d []byte
		if err := rows.Scan(&d); err != nil {
			rows.Close()
			return t.explain("read stored digests", err)
		}
		var k digest
		copy(k[:], d)
		t.known[k] = struct{}{}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return t.explain("read stored digests", err)
	}
	if t.recordInputs {
		if err := res.QueryRow().Scan(&t.dataSnapshot); err != nil {
			return t.explain("take the data snapshot", err)
		}
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
// It returns how many rows were staged.
func (t *RunTx) StageBenchmarks(ctx context.Context, next func() (schema.StagedBenchmark, bool, error)) (int64, error) {
	t.winners = newWinners()
	t.sets = newRunSets()
	if len(t.known) > 0 && t.adopted == nil {
		a, err := t.loadAdoptedPoints(ctx)
		if err != nil {
			return 0, err
		}
		t.adopted = a
	}
	src := &benchmarkSource{next: next, date: t.run.Date, known: t.known, adopted: t.adopted, winners: t.winners, sets: t.sets}
	n, err := t.tx.CopyFrom(ctx, pgx.Identifier{"stage_benchmark"}, stagingColumns, src)
	t.staged = n
	if err != nil {
		return n, t.explain("stage benchmark rows", err)
	}
	return n, nil
}

// Apply writes everything staged: configs, benchmark results (one winner
// per point), availability and run stats, in one round trip.
func (t *RunTx) Apply(ctx context.Context, stats []schema.RunStat) (schema.ApplyResult, error) {
	var r schema.ApplyResult
	b := &pgx.Batch{}
	sets := t.sets
	if sets == nil {
		sets = newRunSets()
	}
	if len(sets.configs) > 0 {
		b.Queue(qInsertConfigs, sets.configArgs()...)
	}
	rk := t.winners.result()
	switch {
	case len(rk.write) == 0:
	case len(t.known) == 0:
		b.Queue(withKVTransferLib(qInsertBenchmarks, t.hasKVTransferLib), t.run.WorkflowRunID, t.run.Date, t.run.IngestID, rankBySeq(rk.write, t.staged), int32(len(rk.write)))
	default:
		b.Queue(withKVTransferLib(qUpsertBenchmarks, t.hasKVTransferLib), t.run.WorkflowRunID, t.run.Date, t.run.IngestID, rk.write)
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
	if len(rk.write) > 0 {
		if err := res.QueryRow().Scan(&r.BenchmarkNew, &r.BenchmarkUpdated); err != nil {
			return r, t.explain("write benchmark results", err)
		}
	}
	r.BenchmarkStaged, r.Covered, r.StaleAttempt = t.staged, rk.covered, rk.stale
	r.BenchmarkDuplicate = rk.winners - r.BenchmarkNew
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
	if t.recordInputs {
		b.Queue(qFinishLedger, t.run.IngestID, string(s.Status), s.FinishedAt.UTC(),
			s.Details.DurationMS, sum, []byte(artifacts), nil, t.inputDigest, t.inputFiles, t.dataSnapshot)
	} else {
		b.Queue(qFinishLedgerWithoutInputs, t.run.IngestID, string(s.Status), s.FinishedAt.UTC(),
			s.Details.DurationMS, sum, []byte(artifacts), nil)
	}
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

// FastToast makes tx compress long values as a run's transaction does
// (qFastToast: lz4 where the server has it). The bench's database floor
// copies its rows with it.
func FastToast(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, qFastToast); err != nil {
		return fmt.Errorf("set lz4 compression: %w", err)
	}
	return nil
}
