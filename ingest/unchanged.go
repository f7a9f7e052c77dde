package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/impact"
	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// inputDigest is the digest of everything outside the database that decides
// what an ingest writes and reports: the tree (source.StartDigest), the
// build and its catalog and override files (Deps.Build), and the run as
// the caller describes it. The tree is walked in the background from the
// start (Config.TreeDigest, or here); its files are hashed once the prior
// ingest's file index is known (use).
type inputDigest struct {
	build, caller []byte
	tree          *source.Digesting
	// treeSum is the tree's own digest, once wait computed it, and
	// treeIndex its file index (every file's path and sha256).
	treeSum, treeIndex []byte
}

func newInputDigest(ctx context.Context, cfg Config, tree *source.Tree, build []byte) *inputDigest {
	in := &inputDigest{build: build, tree: cfg.TreeDigest}
	if in.tree == nil {
		in.tree = source.StartDigest(ctx, tree.Root)
	}
	in.tree.Watch(tree)
	// Plain strings, numbers and times: the encoding cannot fail.
	in.caller, _ = json.Marshal(struct {
		Run         schema.RunIdentity
		Meta        schema.RunMeta
		MergeMeta   schema.RunMeta
		Target      string
		ToolVersion string
	}{cfg.Run, cfg.Meta, cfg.MergeMeta, cfg.Target, cfg.ToolVersion})
	return in
}

// use gives the file index of the run's prior ingest (nil for none), so
// that files unchanged since are not read again, and starts the hashing;
// with later, hashing waits for wait and takes the sums of the files the
// ingest read meanwhile (source.Digesting.Defer).
func (in *inputDigest) use(index []byte, later bool) {
	if later {
		in.tree.Defer(index)
		return
	}
	in.tree.Use(index)
}

// hashed is what wait returned.
type hashed struct {
	digest, index []byte
	err           error
}

// inBackground waits for the digest in the background (nil in: no digest); the
// channel gives wait's result once. Called when no stage reads a file any
// more: the files read meanwhile count as read.
func (in *inputDigest) inBackground(ctx context.Context) <-chan hashed {
	out := make(chan hashed, 1)
	if in == nil {
		return out
	}
	go func() {
		digest, index, err := in.wait(ctx)
		out <- hashed{digest, index, err}
	}()
	return out
}

// wait returns the digest and the tree's file index (for the ledger).
func (in *inputDigest) wait(ctx context.Context) (digest, index []byte, err error) {
	td, index, err := in.tree.Wait(ctx)
	if err != nil {
		return nil, nil, err
	}
	in.treeSum, in.treeIndex = td, index
	parts := [][]byte{in.build, in.caller, td}
	if times := in.tree.Times(); times != nil {
		// Without a listing the files' times order retried attempts.
		parts = append(parts, times)
	}
	h := sha256.New()
	for _, part := range parts {
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	return h.Sum(nil), index, nil
}

// answerUnchanged answers a rerun from the ledger when its inputs are those
// of the run's newest finished ingest and nothing but other runs' ingests
// has written data since (store.PriorIngest says which): a full ingest
// would then read and write exactly what that one did and find every row
// already stored, so its report is that one's with every new item a
// duplicate. It returns false (and the caller ingests in
// full) whenever it cannot be sure: no prior ingest, other inputs, data
// written since, a tree that cannot be hashed, a run dated by the ingest's
// own clock, or a prior ingest that another one superseded meanwhile.
func answerUnchanged(ctx context.Context, cfg Config, start schema.RunStart, sum *schema.Summary, in *inputDigest, d Deps) (*schema.Summary, bool, error) {
	prior, err := d.Store.PriorIngest(ctx, start.Run)
	if err != nil {
		in.use(nil, false)
		return nil, false, err
	}
	compare := !cfg.Reread &&
		// "run date unknown: using the ingest time": each ingest says another time
		!(start.CreatedAtIsFallback && start.Meta.CreatedAt.Equal(start.StartedAt)) &&
		prior.IngestID != 0 && prior.InputDigest != nil && prior.DataUnchanged && prior.Summary != nil &&
		// a publishing caller needs the prior's publication section
		(cfg.Publish == nil || prior.Summary.Publication != nil)
	// A digest nothing compares with now is only recorded. Without an
	// earlier file index to take unchanged files from, it is computed after
	// the stages from the files they read (each file is then read once);
	// with one, at once (only changed files are read, and the walk is not
	// held until the end).
	in.use(prior.InputFiles, !compare && prior.InputFiles == nil)
	if !compare {
		return nil, false, nil
	}
	// The published scores the evidence compares with are read while the
	// tree is hashed (a second connection); unused when the inputs differ.
	evidence := lookUpEvidence(ctx, d, start.Run.SourceRunID, prior.Summary.Impact)
	waited := time.Now()
	digest, index, err := in.wait(ctx)
	d.Log.Debug("inputs hashed", zap.Duration("waited", time.Since(waited)))
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, err
		}
		d.Log.Info("inputs not hashed: ingesting in full", zap.Error(err))
		return nil, false, nil
	}
	if !prior.Matches(digest) {
		return nil, false, nil
	}
	rs := rerunOf(*prior.Summary, sum, prior.IngestID)
	if err := evidence.apply(rs.Impact); err != nil {
		return nil, false, err
	}
	if cfg.Publish == nil {
		// The prior's publication section is its caller's, not this one's.
		rs.Publication = nil
	}
	rs.FinishedAt = d.Now()
	rs.Details.DurationMS = rs.FinishedAt.Sub(rs.StartedAt).Milliseconds()
	rs.Status = schema.StatusSucceeded
	if rs.FailureCount() > 0 || rs.Details.NoBenchmarkData != "" {
		rs.Status = schema.StatusCompletedWithFailures
	}
	var fenced error
	recorded := time.Now()
	defer func() { d.Log.Debug("unchanged rerun recorded", zap.Duration("took", time.Since(recorded))) }()
	ok, err := d.Store.RecordUnchanged(ctx, start, prior, digest, index, rs, cfg.DryRun, func(ctx context.Context) error {
		fenced = fence(ctx, cfg)
		return fenced
	})
	if fenced != nil {
		return nil, false, fenceError{fenced}
	}
	if err != nil || !ok {
		return nil, false, err
	}
	return rs, true, nil
}

// rerunOf is the report of a full rerun of the prior ingest's inputs on
// the data it left: the same items, read the same way, each new one now a
// duplicate and nothing written. The run, target, links and times are
// this ingest's (cur).
func rerunOf(prior schema.Summary, cur *schema.Summary, priorID int64) *schema.Summary {
	r := prior
	r.SchemaVersion, r.IngestID, r.Run, r.Target, r.DryRun = cur.SchemaVersion, 0, cur.Run, cur.Target, cur.DryRun
	r.StartedAt, r.Links, r.AbortReason = cur.StartedAt, cur.Links, ""
	for _, c := range []*schema.Counts{&r.Rows.Benchmark, &r.Rows.Eval, &r.Rows.Trace, &r.Rows.Power} {
		c.Duplicate += c.New
		c.New = 0
	}
	st, dt := &r.Stats, &r.Details
	st.RunStatsDuplicate += st.RunStatsNew
	dt.EvalSamplesDuplicate += st.EvalSamplesNew
	st.ZeroWritten()
	dt.ZeroWritten()
	dt.EvalSampleFilesUnchanged = dt.EvalSampleFilesRecorded
	// Nothing is written, so the view has nothing of this ingest's to
	// apply: skipped, as the refresh after it says unless another writer's
	// changes are pending (RefreshAfterIngest then records its outcome).
	// Said here, the ledger row is written once, with it.
	dt.LatestBenchmarks = &schema.ViewRefresh{View: schema.LatestBenchmarksView, Status: schema.RefreshSkipped}
	// Nothing is written: nothing the dashboard shows changes.
	r.Impact = impact.Unchanged(prior.Impact)
	dt.UnchangedSince = priorID
	// The refresh that followed the prior ingest is not part of its
	// outcome: this ingest's own refresh follows it.
	r.Failures = slices.DeleteFunc(slices.Clone(prior.Failures), isRefreshFailure)
	r.Notes = slices.DeleteFunc(slices.Clone(prior.Notes), func(n string) bool {
		return strings.HasSuffix(n, runstate.NoteSamplesReplaced) || strings.HasSuffix(n, runstate.NoteChangelogRemoved) ||
			strings.HasPrefix(n, unchangedNotePrefix)
	})
	r.Notes = append(r.Notes, fmt.Sprintf("%s%d: the same tree, build and options, and nothing written to the data since; "+
		"its outcome stands, confirmed without reading the run again (--reread reads everything)", unchangedNotePrefix, priorID))
	return &r
}

// evidenceLookup is the published scores of an earlier ingest's eval
// evidence as they are now, being read: other runs' ingests since do not
// change this run's outcome, but they do change what it is compared with.
type evidenceLookup struct {
	done      chan struct{}
	published map[schema.EvalTask][]schema.PublishedScore
	err       error
}

// lookUpEvidence starts reading the published scores of imp's eval tasks
// (nothing to read: done at once).
func lookUpEvidence(ctx context.Context, d Deps, runID int64, imp *schema.Impact) *evidenceLookup {
	l := &evidenceLookup{done: make(chan struct{})}
	if imp == nil || len(imp.Evals) == 0 {
		close(l.done)
		return l
	}
	tasks := impact.EvalTasks(imp.Evals)
	go func() {
		defer close(l.done)
		l.published, l.err = d.Store.PublishedEvalScores(ctx, runID, tasks)
	}()
	return l
}

// apply waits for the scores and puts them in imp's evidence (a copy of
// the earlier ingest's, whose published scores it replaces).
func (l *evidenceLookup) apply(imp *schema.Impact) error {
	<-l.done
	if l.err != nil {
		return l.err
	}
	if imp == nil || len(imp.Evals) == 0 {
		return nil
	}
	thresholds, err := impact.LoadThresholds()
	if err != nil {
		return err
	}
	imp.Evals = impact.Evidence(imp.Evals, thresholds, l.published)
	return nil
}

const unchangedNotePrefix = "inputs unchanged since ingest "

// fenceError is a refusal of Config.Fence: the caller's coordination, not
// an outcome of the run, so it is not recorded in the ledger.
type fenceError struct{ err error }

func (e fenceError) Error() string { return e.err.Error() }
func (e fenceError) Unwrap() error { return e.err }
