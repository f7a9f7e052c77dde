package backfill

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// Source lists the runs of a backfill and makes one run's tree ready.
type Source interface {
	// List returns the runs to backfill, in any order. Runs that cannot be
	// ingested come back settled (State and Detail set).
	List(ctx context.Context) ([]schema.BackfillRun, error)
	// Fetch makes the run's tree ready to ingest.
	Fetch(ctx context.Context, run schema.BackfillRun) (*Fetched, error)
}

// Fetched is a run tree ready to ingest.
type Fetched struct {
	Dir string
	// Attempt is the run's current attempt when the source knows it.
	Attempt int
	// Configure adds what the source knows of the run to the ingest's
	// configuration.
	Configure func(*ingest.Config)
	// Cleanup removes what the fetch left behind (nil: nothing).
	Cleanup func() error
	// Skip, when set, says why the run is not to be ingested now (a
	// re-run in progress): it is settled skipped, and a later pass
	// ingests it.
	Skip string
}

// RunFetcher is the GitHub client a GitHub source uses.
type RunFetcher interface {
	ListRuns(ctx context.Context, f github.RunFilter) ([]github.ListedRun, error)
	GetRun(ctx context.Context, id int64) (github.Run, error)
	Fetch(ctx context.Context, req github.Request) (*github.Result, error)
	Discard(res *github.Result) error
}

// GitHubSource backfills a workflow's completed runs, or the runs of a list.
type GitHubSource struct {
	Client RunFetcher
	Filter github.RunFilter
	// RunIDs, when set, replace the listing: each run is looked up.
	RunIDs []int64
	// KeepDownloads leaves fetched runs in the cache.
	KeepDownloads bool
	Log           *zap.Logger
}

// lookups bounds concurrent run lookups of a run list.
const lookups = 8

// List lists the workflow's completed runs, or looks up each listed run.
func (g *GitHubSource) List(ctx context.Context) ([]schema.BackfillRun, error) {
	if g.RunIDs == nil {
		listed, err := g.Client.ListRuns(ctx, g.Filter)
		if err != nil {
			return nil, err
		}
		out := make([]schema.BackfillRun, len(listed))
		for i, r := range listed {
			out[i] = schema.BackfillRun{RunID: r.ID, Attempt: r.Attempt, CreatedAt: r.CreatedAt}
		}
		return out, nil
	}
	out := make([]schema.BackfillRun, len(g.RunIDs))
	sem := make(chan struct{}, lookups)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var fatal error
	for i, id := range g.RunIDs {
		sem <- struct{}{} // at most `lookups` goroutines, however long the list
		wg.Go(func() {
			defer func() { <-sem }()
			r := schema.BackfillRun{RunID: id}
			run, err := g.Client.GetRun(ctx, id)
			switch {
			case ctx.Err() != nil:
				mu.Lock()
				fatal = ctx.Err()
				mu.Unlock()
			case github.IsAuthError(err):
				// A refused token is no fact about this run.
				mu.Lock()
				fatal = err
				mu.Unlock()
			case err != nil:
				r.State, r.Detail = schema.BackfillFailed, fmt.Sprintf("look up the run: %v", err)
			default:
				r.Attempt, r.CreatedAt = run.Meta.RunAttempt, run.Meta.CreatedAt
				if run.Meta.Status != "" && run.Meta.Status != "completed" {
					r.State, r.Detail = schema.BackfillSkipped, fmt.Sprintf("the run is %s, not completed", run.Meta.Status)
				}
			}
			out[i] = r
		})
	}
	wg.Wait()
	if fatal != nil {
		return nil, fatal
	}
	return out, nil
}

// Fetch downloads the run as `ingest run` does, at its current attempt.
func (g *GitHubSource) Fetch(ctx context.Context, run schema.BackfillRun) (*Fetched, error) {
	// A run re-run since it was listed may be in progress now: its
	// listing still holds the previous attempt's artifacts, and an ingest
	// would record the new attempt as done before it is.
	res, err := g.Client.Fetch(ctx, github.Request{SourceRunID: run.RunID, RequireCompleted: true})
	var notDone *github.NotCompletedError
	switch {
	case errors.As(err, &notDone):
		return &Fetched{Attempt: notDone.Attempt, Skip: fmt.Sprintf("attempt %d is %s, not completed", notDone.Attempt, notDone.Status)}, nil
	case errors.Is(err, github.ErrNoArtifacts):
		// Expired: no later pass can do better, so this is no failure.
		return &Fetched{Skip: err.Error()}, nil
	case err != nil:
		return nil, err
	}
	return fetched(run.RunID, res, g.Client, g.KeepDownloads), nil
}

// DirSource backfills the run trees under a directory: every subdirectory
// that is a run tree (the layout `ingest run` leaves in its cache, or
// trees downloaded by hand). A tree's run comes from its artifacts.json,
// else from its name (the run id).
type DirSource struct {
	Dir string
	Log *zap.Logger
}

// List reads each subdirectory's artifacts.json (nothing else is opened).
func (d *DirSource) List(ctx context.Context) ([]schema.BackfillRun, error) {
	entries, err := os.ReadDir(d.Dir)
	if err != nil {
		return nil, fmt.Errorf("--from-dir: %w", err)
	}
	byRun := map[int64]schema.BackfillRun{}
	var order []int64
	for _, e := range entries {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(d.Dir, e.Name())
		if !e.IsDir() {
			// A link to a tree counts as the tree.
			info, err := os.Stat(dir)
			if e.Type()&fs.ModeSymlink == 0 || err != nil || !info.IsDir() {
				continue
			}
		}
		r, ok, err := d.describe(ctx, dir, e.Name())
		if err != nil {
			return nil, fmt.Errorf("--from-dir: %w", err)
		}
		if !ok {
			continue
		}
		if prev, dup := byRun[r.RunID]; dup {
			// Two trees of one run: the later attempt wins.
			keep, drop := prev, r
			if r.Attempt > prev.Attempt {
				keep, drop = r, prev
			}
			d.Log.Warn("two run trees of one run: the later attempt is backfilled", zap.Int64("run_id", r.RunID),
				zap.String("kept", keep.Tree), zap.String("ignored", drop.Tree))
			byRun[r.RunID] = keep
			continue
		}
		byRun[r.RunID] = r
		order = append(order, r.RunID)
	}
	out := make([]schema.BackfillRun, 0, len(order))
	for _, id := range order {
		out = append(out, byRun[id])
	}
	if len(out) == 0 {
		d.Log.Warn("no run tree found", zap.String("dir", d.Dir))
	}
	return out, nil
}

// describe names the run of one tree as its ingest will record it (the
// source run of a reused sweep's tree); a directory that holds no
// artifact, or names no run, is reported and left out.
func (d *DirSource) describe(ctx context.Context, dir, name string) (schema.BackfillRun, bool, error) {
	r := schema.BackfillRun{Tree: dir}
	tree, err := source.Open(ctx, dir, d.Log)
	if err != nil {
		d.Log.Warn("not a run tree: left out", zap.String("dir", dir), zap.Error(err))
		return r, false, nil
	}
	defer tree.Close()
	if len(tree.Artifacts) == 0 {
		d.Log.Warn("a directory without artifacts: left out", zap.String("dir", dir))
		return r, false, nil
	}
	r.CreatedAt = tree.Run.CreatedAt
	id, attempt, err := ingest.TreeRun(tree)
	switch {
	case err == nil:
		r.RunID, r.Attempt = id, attempt
	case tree.Run.RunID != 0:
		// Contradictory metadata: queued under artifacts.json's run, its
		// ingest fails and says why.
		r.RunID, r.Attempt = tree.Run.RunID, treeAttempt(tree.Run)
	case tree.ListingErr != nil:
		// An unusable listing: queued under the directory's name when that
		// is the run id, so its ingest fails, naming the listing, and the
		// ledger records it; otherwise the run cannot be known.
		id, perr := strconv.ParseInt(name, 10, 64)
		if perr != nil || id <= 0 {
			return r, false, fmt.Errorf("run tree %s: %w (and the directory's name is not a run id)", dir, tree.ListingErr)
		}
		r.RunID, r.Attempt = id, 1
	default:
		// No artifacts.json run: the directory's name must be the run id. A
		// reused sweep's tree (the cache's SOURCE-merge-MERGE) needs its
		// artifacts.json and reuse metadata to be ingested as such.
		if strings.Contains(name, "-merge-") {
			d.Log.Warn("a reused sweep's tree without artifacts.json or reuse metadata: left out", zap.String("dir", dir))
			return r, false, nil
		}
		id, perr := strconv.ParseInt(name, 10, 64)
		if perr != nil || id <= 0 {
			d.Log.Warn("a directory without artifacts.json whose name is not a run id: left out", zap.String("dir", dir))
			return r, false, nil
		}
		r.RunID, r.Attempt = id, 1
	}
	return r, true, nil
}

// treeAttempt is the attempt artifacts.json gives, else 1 (the ingest's
// default).
func treeAttempt(m schema.RunMeta) int {
	if m.RunAttempt == 0 {
		return 1
	}
	return m.RunAttempt
}

// Fetch hands over the tree in place, with the attempt it holds now: the
// tree may have been replaced by a later attempt since it was queued.
func (d *DirSource) Fetch(ctx context.Context, run schema.BackfillRun) (*Fetched, error) {
	if run.Tree == "" {
		return nil, fmt.Errorf("run %d: no run tree recorded in the queue", run.RunID)
	}
	if info, err := os.Stat(run.Tree); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("run %d: the run tree %s is gone", run.RunID, run.Tree)
	}
	tree, err := source.Open(ctx, run.Tree, d.Log)
	if err != nil {
		return nil, fmt.Errorf("run %d: %w", run.RunID, err)
	}
	attempt := treeAttempt(tree.Run)
	if _, a, err := ingest.TreeRun(tree); err == nil {
		attempt = a
	}
	tree.Close()
	return &Fetched{Dir: run.Tree, Attempt: attempt, Configure: func(cfg *ingest.Config) {
		cfg.Run.SourceRunID = run.RunID
	}}, nil
}

// ReadRunIDs reads a --runs file: run ids separated by white space, commas
// or new lines; '#' starts a comment. Ids are returned once each, in file
// order, with a digest of the sorted set (the pass key's part).
func ReadRunIDs(r io.Reader, name string) ([]int64, string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	seen := map[int64]bool{}
	var ids []int64
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
			id, err := strconv.ParseInt(f, 10, 64)
			if err != nil || id <= 0 {
				return nil, "", fmt.Errorf("%s:%d: %q is not a run id", name, line, f)
			}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	if len(ids) == 0 {
		return nil, "", fmt.Errorf("%s: no run ids", name)
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	h := sha256.New()
	for _, id := range sorted {
		fmt.Fprintf(h, "%d\n", id)
	}
	return ids, hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// fetched is a run fetched from GitHub or the archive (res) as a backfill
// ingests it: the run's attempt and both runs' metadata into the ingest's
// configuration, the download discarded afterwards unless kept.
func fetched(runID int64, res *github.Result, client RunFetcher, keep bool) *Fetched {
	f := &Fetched{Dir: res.Dir, Attempt: res.Source.Meta.RunAttempt, Configure: func(cfg *ingest.Config) {
		cfg.Run.SourceRunID = runID
		cfg.Run.SourceRunAttempt = res.Source.Meta.RunAttempt
		cfg.Run.MergeRunID, cfg.Run.MergeRunAttempt = res.Merge.Meta.RunID, res.Merge.Meta.RunAttempt
		cfg.Meta = cfg.Meta.Merge(res.Meta)
		cfg.MergeMeta = cfg.MergeMeta.Merge(res.Merge.Meta)
		cfg.SourceNotes = res.Notes
	}}
	if !keep {
		f.Cleanup = func() error { return client.Discard(res) }
	}
	return f
}
