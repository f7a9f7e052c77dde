package ingest

import (
	"fmt"
	"time"

	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// runStart settles the run's identity and metadata: the caller's values
// first, then the tree's artifacts.json, then fallbacks that are marked as
// such so they never replace a known value later.
func runStart(cfg Config, tree *source.Tree, now time.Time, t *tally) (schema.RunStart, error) {
	id := cfg.Run
	if id.SourceRunID == 0 {
		id.SourceRunID = tree.Run.RunID
	}
	if id.SourceRunID <= 0 {
		return schema.RunStart{}, fmt.Errorf("no run id: pass --run-id (or INGEST_RUN_ID), or an artifacts.json with the run")
	}
	if tree.Run.RunID != 0 && tree.Run.RunID != id.SourceRunID {
		return schema.RunStart{}, fmt.Errorf("artifacts.json describes run %d, not run %d: the tree belongs to another run", tree.Run.RunID, id.SourceRunID)
	}
	if id.SourceRunAttempt == 0 {
		id.SourceRunAttempt = tree.Run.RunAttempt
	}
	if id.SourceRunAttempt == 0 {
		id.SourceRunAttempt = 1
		t.note("run attempt unknown (no --attempt, no attempt in artifacts.json): recorded as attempt 1")
	}
	if id.SourceRunAttempt < 1 || id.SourceRunAttempt > 32767 {
		return schema.RunStart{}, fmt.Errorf("run attempt %d is out of range", id.SourceRunAttempt)
	}
	if id.MergeRunID == 0 {
		id.MergeRunID, id.MergeRunAttempt = id.SourceRunID, id.SourceRunAttempt
	}
	meta := cfg.Meta.Merge(tree.Run)
	meta.RunID, meta.RunAttempt = id.SourceRunID, id.SourceRunAttempt
	st := schema.RunStart{Run: id, Target: cfg.Target, StartedAt: now, ToolVersion: cfg.ToolVersion}
	if meta.Name == "" {
		meta.Name = fmt.Sprintf("CI Run %d", id.SourceRunID)
		st.NameIsFallback = true
	}
	if meta.CreatedAt.IsZero() {
		st.CreatedAtIsFallback = true
		if first := earliestUpload(tree); !first.IsZero() {
			meta.CreatedAt = first
			t.note(fmt.Sprintf("run date unknown: using the earliest artifact upload (%s) until a later ingest knows it", first.UTC().Format(time.RFC3339)))
		} else {
			meta.CreatedAt = now
			t.note(fmt.Sprintf("run date unknown: using the ingest time (%s) until a later ingest knows it", now.UTC().Format(time.RFC3339)))
		}
	}
	if meta.HTMLURL == "" && id.Repo != "" {
		meta.HTMLURL = runURL(id.Repo, id.SourceRunID)
	}
	st.Meta = meta
	return st, nil
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

func runURL(repo string, id int64) string {
	return fmt.Sprintf("https://github.com/%s/actions/runs/%d", repo, id)
}
