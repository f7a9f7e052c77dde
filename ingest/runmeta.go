package ingest

import (
	"fmt"
	"time"

	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// runStart settles the run's identity and metadata: the caller's values
// first, then the tree's artifacts.json, then fallbacks that are marked as
// such so they never replace a known value later.
//
// A reused run (a pull request's sweep ingested for the merge run that
// reused it: reused-ingest-metadata/reuse_source_run.json in the tree, or a
// caller's merge run that differs from the source run) is attributed to the
// source run and attempt; its trigger context — created_at and
// run_started_at, and so the date — and its changelog come from the merge
// run (docs/formats.md, "Provenance and reused sweeps").
func runStart(cfg Config, tree *source.Tree, now time.Time, t *runstate.Tally) (schema.RunStart, error) {
	id := cfg.Run
	reuse, err := readReuse(tree)
	if err != nil {
		return schema.RunStart{}, err
	}
	if reuse != nil {
		if err := applyReuse(&id, reuse); err != nil {
			return schema.RunStart{}, err
		}
	}
	if id.SourceRunID == 0 {
		id.SourceRunID = tree.Run.RunID
	}
	if id.SourceRunID <= 0 {
		return schema.RunStart{}, fmt.Errorf("no run id: pass --run-id (or INGEST_RUN_ID), or an artifacts.json with the run")
	}
	reused := id.MergeRunID != 0 && id.MergeRunID != id.SourceRunID
	treeIsMerge := reused && tree.Run.RunID == id.MergeRunID
	if tree.Run.RunID != 0 && tree.Run.RunID != id.SourceRunID && !treeIsMerge {
		return schema.RunStart{}, fmt.Errorf("artifacts.json describes run %d, not run %d: the tree belongs to another run", tree.Run.RunID, id.SourceRunID)
	}
	var srcTree, mergeTree schema.RunMeta
	if treeIsMerge {
		mergeTree = tree.Run
	} else {
		srcTree = tree.Run
	}
	if id.SourceRunAttempt == 0 {
		id.SourceRunAttempt = srcTree.RunAttempt
	}
	if id.SourceRunAttempt == 0 {
		id.SourceRunAttempt = 1
		t.Note("run attempt unknown (no --attempt, no attempt in artifacts.json): recorded as attempt 1")
	}
	if id.SourceRunAttempt < 1 || id.SourceRunAttempt > 32767 {
		return schema.RunStart{}, fmt.Errorf("run attempt %d is out of range", id.SourceRunAttempt)
	}
	if !reused {
		id.MergeRunID, id.MergeRunAttempt = id.SourceRunID, id.SourceRunAttempt
	}
	if id.MergeRunAttempt == 0 {
		id.MergeRunAttempt = mergeTree.RunAttempt
	}
	if id.MergeRunAttempt == 0 {
		id.MergeRunAttempt = 1
	}
	meta := cfg.Meta.Merge(srcTree)
	meta.RunID, meta.RunAttempt = id.SourceRunID, id.SourceRunAttempt
	merge := cfg.MergeMeta.Merge(mergeTree)
	if reuse != nil {
		if meta.HTMLURL == "" {
			meta.HTMLURL = reuse.SourceRunURL
		}
		if meta.HeadSHA == "" {
			meta.HeadSHA = reuse.SourceHeadSHA
		}
		if merge.HTMLURL == "" {
			merge.HTMLURL = reuse.IngestRunURL
		}
	}
	if reused {
		if !merge.CreatedAt.IsZero() {
			meta.CreatedAt = merge.CreatedAt
			if !merge.RunStartedAt.IsZero() {
				meta.RunStartedAt = merge.RunStartedAt
			}
		} else {
			t.Note(fmt.Sprintf("merge run %d: creation time unknown, the run date is the source run's", id.MergeRunID))
		}
		t.Note(fmt.Sprintf("reused run: rows are attributed to source run %d attempt %d; the changelog and run date come from merge run %d attempt %d",
			id.SourceRunID, id.SourceRunAttempt, id.MergeRunID, id.MergeRunAttempt))
	}
	st := schema.RunStart{Run: id, Target: cfg.Target, StartedAt: now, ToolVersion: cfg.ToolVersion}
	if meta.Name == "" {
		meta.Name = fmt.Sprintf("CI Run %d", id.SourceRunID)
		st.NameIsFallback = true
	}
	if meta.CreatedAt.IsZero() {
		st.CreatedAtIsFallback = true
		if first := earliestUpload(tree); !first.IsZero() {
			meta.CreatedAt = first
			t.Note(fmt.Sprintf("run date unknown: using the earliest artifact upload (%s) until a later ingest knows it", first.UTC().Format(time.RFC3339)))
		} else {
			meta.CreatedAt = now
			t.Note(fmt.Sprintf("run date unknown: using the ingest time (%s) until a later ingest knows it", now.UTC().Format(time.RFC3339)))
		}
	}
	if meta.HTMLURL == "" && id.Repo != "" {
		meta.HTMLURL = schema.RunURL(id.Repo, id.SourceRunID)
	}
	if !reused {
		merge = meta
	}
	merge.RunID, merge.RunAttempt = id.MergeRunID, id.MergeRunAttempt
	if merge.HTMLURL == "" && id.Repo != "" {
		merge.HTMLURL = schema.RunURL(id.Repo, id.MergeRunID)
	}
	st.Meta, st.MergeMeta = meta, merge
	return st, nil
}

// applyReuse switches the identity to the source run the reuse metadata
// names. The caller may name either run (the merge run is what a dispatch
// triggers); naming a third one is an error.
func applyReuse(id *schema.RunIdentity, r *reuseInfo) error {
	where := fmt.Sprintf("reuse metadata (%s/%s) names source run %d and merge run %d", r.Artifact, r.File, r.SourceRunID, r.IngestRunID)
	switch id.SourceRunID {
	case 0, r.IngestRunID:
		if id.SourceRunID == r.IngestRunID && id.MergeRunAttempt == 0 {
			id.MergeRunAttempt = id.SourceRunAttempt // the caller's attempt is the merge run's
		}
		id.SourceRunAttempt = r.SourceRunAttempt
	case r.SourceRunID:
		if id.SourceRunAttempt == 0 {
			id.SourceRunAttempt = r.SourceRunAttempt
		}
	default:
		return fmt.Errorf("%s, not run %d", where, id.SourceRunID)
	}
	if id.MergeRunID != 0 && id.MergeRunID != r.IngestRunID {
		return fmt.Errorf("%s, not merge run %d", where, id.MergeRunID)
	}
	id.SourceRunID, id.MergeRunID = r.SourceRunID, r.IngestRunID
	if id.MergeRunAttempt == 0 {
		id.MergeRunAttempt = r.IngestRunAttempt
	}
	return nil
}

func earliestUpload(tree *source.Tree) time.Time {
	var first time.Time
	for _, l := range tree.Listing {
		if !l.CreatedAt.IsZero() && (first.IsZero() || l.CreatedAt.Before(first)) {
			first = l.CreatedAt
		}
	}
	return first
}

// TreeRun is the run and attempt an ingest of the tree records when the
// caller names none: what its reuse metadata and artifacts.json say, as
// Run settles them. It fails when the tree names no run, or names it in
// contradictory ways; when the tree's listing is unusable and nothing else
// names the run, the error is the listing's (source.Tree.ListingErr).
func TreeRun(tree *source.Tree) (runID int64, attempt int, err error) {
	start, err := runStart(Config{}, tree, time.Time{}, runstate.NewTally(&schema.Summary{}))
	if err != nil {
		if tree.ListingErr != nil {
			return 0, 0, tree.ListingErr
		}
		return 0, 0, err
	}
	return start.Run.SourceRunID, start.Run.SourceRunAttempt, nil
}
