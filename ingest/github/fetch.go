package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// Request names the runs to fetch.
type Request struct {
	// SourceRunID is the run whose benchmark artifacts are ingested.
	SourceRunID int64
	// MergeRunID is the run that triggered the ingest (0: the source run).
	// When it differs, the sweep was reused: the changelog comes from it.
	MergeRunID int64
	// Attempt, when set, must be the source run's current attempt.
	Attempt int
	// Source is where the artifacts come from (default: auto when the
	// client has an archive, else github).
	Source Source
	// Archived, when set, is what the archive holds of the source run, as
	// the caller listed it just before (Archive.Contents): an archive
	// fetch takes it instead of listing the run again.
	Archived *schema.ArchivedRun
	// RequireCompleted refuses, before any download, a source run whose
	// current attempt is not completed (a re-run in progress: its listing
	// still holds the previous attempt's artifacts) with a
	// *NotCompletedError.
	RequireCompleted bool
}

// NotCompletedError is the refusal of a run whose current attempt is
// still queued or in progress.
type NotCompletedError struct {
	RunID   int64
	Attempt int
	Status  string
}

func (e *NotCompletedError) Error() string {
	return fmt.Sprintf("run %d: attempt %d is %s, not completed", e.RunID, e.Attempt, e.Status)
}

// Result is a fetched run, ready to ingest.
type Result struct {
	// Dir is the run tree: <name>.zip per selected artifact, artifacts.json
	// (the listing used and the run), and in reuse mode
	// reused-ingest-metadata/reuse_source_run.json.
	Dir    string
	Source Run
	Merge  Run
	Reused bool
	// Meta is the run metadata the ingest records: the source run's, with
	// the merge run's created_at and run_started_at in reuse mode.
	Meta schema.RunMeta
	// Reuse is what reuse_source_run.json says (nil unless Reused).
	Reuse *ReuseMetadata
	// Selected is the listing of the artifacts in Dir, sorted by name.
	Selected []schema.ArtifactListing
	// Listed is what Dir's artifacts.json lists: every upload of the
	// source run, expired ones and older retries included, so that the
	// ingest counts what it could not read — but for a reused sweep the
	// source's changelog-metadata uploads are replaced by the merge run's
	// selected one.
	Listed []schema.ArtifactListing
	// ChangelogPR is the pull request the changelog links to in this
	// repository (0 when none).
	ChangelogPR int
	// Unavailable are the selected artifacts that expired (410) or were
	// deleted (404) between the listing and their download: they are not
	// in Dir, and Listed marks the expired ones expired, so the ingest
	// reports them as expired or missing.
	Unavailable []*UnavailableError
	// FromArchive names the selected artifacts read from the archive.
	FromArchive []string
	// Notes are for the ingest's report: where the artifacts came from,
	// which run facts were inferred.
	Notes      []string
	Downloaded int
	Cached     int
	Bytes      int64
	Took       time.Duration
}

// ErrFetchTimeout is the cause of a fetch stopped by FetchTimeout.
var ErrFetchTimeout = errors.New("fetch timeout")

// FetchError is a fetch that failed. Its text is the cause's; Attempt is
// the source run's current attempt when GitHub said it before the failure
// (0 when it did not), so the abort can be recorded against it.
type FetchError struct {
	Attempt int
	Err     error
}

func (e *FetchError) Error() string { return e.Err.Error() }

func (e *FetchError) Unwrap() error { return e.Err }

// Fetch fetches both runs' metadata, lists and selects the artifacts,
// downloads what the cache lacks, and lays out the run tree. Everything
// that can fail before an ingest fails here, before any database write,
// with a *FetchError.
func (c *Client) Fetch(ctx context.Context, req Request) (*Result, error) {
	res := &Result{}
	ctx, cancel := context.WithTimeoutCause(ctx, c.opts.FetchTimeout,
		fmt.Errorf("the fetch took longer than %s (--fetch-timeout): %w", c.opts.FetchTimeout, ErrFetchTimeout))
	defer cancel()
	if err := c.fetch(ctx, req, res); err != nil {
		return nil, &FetchError{Attempt: res.Source.Meta.RunAttempt, Err: err}
	}
	return res, nil
}

func (c *Client) fetch(ctx context.Context, req Request, res *Result) error {
	started := time.Now()
	if req.SourceRunID <= 0 {
		return errors.New("no source run id")
	}
	if req.MergeRunID == 0 {
		req.MergeRunID = req.SourceRunID
	}
	res.Reused = req.MergeRunID != req.SourceRunID
	src, err := c.source(req)
	if err != nil {
		return err
	}
	var fromArchive map[int64]bool
	if src == SourceArchive {
		if fromArchive, err = c.fetchArchive(ctx, req, res); err != nil {
			return err
		}
		return c.finish(ctx, req, res, fromArchive, nil, started)
	}
	if res.Source, err = c.GetRun(ctx, req.SourceRunID); err != nil {
		res.Source = Run{}
		return fmt.Errorf("source run: %w", err)
	}
	if req.Attempt != 0 && req.Attempt != res.Source.Meta.RunAttempt {
		return fmt.Errorf("source run %d: GitHub reports attempt %d, not the requested attempt %d (the listing holds every attempt's artifacts; the ingest records the current one)",
			req.SourceRunID, res.Source.Meta.RunAttempt, req.Attempt)
	}
	if st := res.Source.Meta.Status; req.RequireCompleted && st != "" && st != "completed" {
		return &NotCompletedError{RunID: req.SourceRunID, Attempt: res.Source.Meta.RunAttempt, Status: st}
	}
	res.Merge = res.Source
	if res.Reused {
		if res.Merge, err = c.GetRun(ctx, req.MergeRunID); err != nil {
			return fmt.Errorf("merge run: %w", err)
		}
	}
	srcList, err := c.ListArtifacts(ctx, req.SourceRunID)
	if err != nil {
		return fmt.Errorf("source run: %w", err)
	}
	if src == SourceAuto {
		if srcList, fromArchive, err = c.fillFromArchive(ctx, req.SourceRunID, srcList, res); err != nil {
			return err
		}
	}
	var mergeList []schema.ArtifactListing
	if res.Reused {
		if mergeList, err = c.ListArtifacts(ctx, req.MergeRunID); err != nil {
			return fmt.Errorf("merge run: %w", err)
		}
	}
	if res.Selected, err = Select(req.SourceRunID, req.MergeRunID, srcList, mergeList); err != nil {
		return err
	}
	res.Listed = listed(res.Reused, srcList, res.Selected)
	c.log.Info("artifacts selected", zap.Int64("source_run", req.SourceRunID), zap.Int64("merge_run", req.MergeRunID),
		zap.Int("listed", len(srcList)+len(mergeList)), zap.Int("selected", len(res.Selected)))
	var late *lateArchive
	if src == SourceAuto {
		late = &lateArchive{runID: req.SourceRunID}
	}
	return c.finish(ctx, req, res, fromArchive, late, started)
}

// finish downloads the selection (from GitHub, or from the archive for
// the ids in fromArchive, and with late those GitHub stops serving before
// their download) and lays out the run tree.
func (c *Client) finish(ctx context.Context, req Request, res *Result, fromArchive map[int64]bool, late *lateArchive, started time.Time) error {
	stats, err := c.downloadAll(ctx, res.Selected, fromArchive, late)
	if err != nil {
		return err
	}
	if len(stats.Late) > 0 {
		fromArchive = maps.Clone(fromArchive)
		if fromArchive == nil {
			fromArchive = map[int64]bool{}
		}
		for _, g := range stats.Late {
			fromArchive[g.Artifact.ID] = true
			res.Notes = append(res.Notes, g.Error()+": read from the archive "+c.opts.Archive.String())
		}
	}
	res.Downloaded, res.Cached, res.Bytes = stats.Downloaded, stats.Cached, stats.Bytes
	res.Unavailable = stats.Unavailable
	res.Selected, res.Listed = dropUnavailable(res.Selected, res.Listed, stats.Unavailable)
	c.provenance(res, fromArchive)
	for _, u := range stats.Unavailable {
		if u.Err != nil {
			res.Notes = append(res.Notes, u.Error())
		}
	}

	res.Meta = res.Source.Meta
	if res.Reused {
		// Rows belong to the source run; the date is the merge's.
		if !res.Merge.Meta.CreatedAt.IsZero() {
			res.Meta.CreatedAt = res.Merge.Meta.CreatedAt
		}
		if !res.Merge.Meta.RunStartedAt.IsZero() {
			res.Meta.RunStartedAt = res.Merge.Meta.RunStartedAt
		}
	}
	if res.Reused {
		m := c.reuseMetadata(res)
		res.Reuse = &m
	}
	if res.Dir, err = c.layTree(res); err != nil {
		return err
	}
	res.ChangelogPR = c.changelogPR(res)
	res.Took = time.Since(started)
	c.log.Info("run tree ready", zap.String("dir", res.Dir), zap.Int("artifacts", len(res.Selected)),
		zap.Int("downloaded", res.Downloaded), zap.Int("cached", res.Cached), zap.Int64("bytes", res.Bytes),
		zap.Duration("took", res.Took))
	return nil
}

// treeDir is the run tree of a source run (and merge run, when reused).
func (c *Client) treeDir(res *Result) string {
	name := fmt.Sprintf("%d", res.Source.Meta.RunID)
	if res.Reused {
		name = fmt.Sprintf("%d-merge-%d", res.Source.Meta.RunID, res.Merge.Meta.RunID)
	}
	return filepath.Join(c.opts.CacheDir, c.owner, c.repo, "runs", name)
}

// ReuseDir and ReuseFile are where a reused run's metadata is written.
const (
	ReuseDir  = "reused-ingest-metadata"
	ReuseFile = "reuse_source_run.json"
)

// layTree makes the run tree: each selected artifact linked (or copied)
// from the cache as <name>.zip, entries of an earlier selection removed,
// artifacts.json written, and the reuse metadata written or removed.
func (c *Client) layTree(res *Result) (string, error) {
	dir := c.treeDir(res)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("run tree: %w", err)
	}
	want := map[string]bool{source.ListingFile: true}
	if res.Reused {
		want[ReuseDir] = true
	}
	renamed := map[string]string{}
	for _, a := range res.Selected {
		local := localName(a)
		if local != a.Name {
			renamed[local] = a.Name
			c.log.Info("artifact name is no safe file name: laid out under a local name", zap.String("artifact", a.Name),
				zap.String("local", local+".zip"))
		}
		want[local+".zip"] = true
		if err := placeFile(c.artifactPath(a.ID), filepath.Join(dir, local+".zip")); err != nil {
			return "", fmt.Errorf("run tree: artifact %s: %w", a.Name, err)
		}
	}
	if len(renamed) > 0 {
		want[source.NamesFile] = true
		if err := source.WriteNames(filepath.Join(dir, source.NamesFile), renamed); err != nil {
			return "", fmt.Errorf("run tree: %w", err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("run tree: %w", err)
	}
	for _, e := range entries {
		if !want[e.Name()] {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return "", fmt.Errorf("run tree: %w", err)
			}
		}
	}
	if err := source.WriteListing(filepath.Join(dir, source.ListingFile), res.Meta, res.Listed); err != nil {
		return "", fmt.Errorf("run tree: %w", err)
	}
	if res.Reused {
		if err := writeReuseMetadata(filepath.Join(dir, ReuseDir), res.Reuse); err != nil {
			return "", fmt.Errorf("run tree: %w", err)
		}
	}
	return dir, nil
}

// listed is the listing a run tree records (Result.Listed): every upload
// of the source run and, for a reused sweep, the merge run's selected
// changelog-metadata instead of the source's. An upload listed twice (the
// pages shifted while they were read) is recorded once.
func listed(reused bool, source, selected []schema.ArtifactListing) []schema.ArtifactListing {
	out := make([]schema.ArtifactListing, 0, len(source)+1)
	seen := make(map[int64]bool, len(source))
	for _, a := range source {
		if reused && a.Name == ChangelogArtifact || seen[a.ID] {
			continue
		}
		seen[a.ID] = true
		out = append(out, a)
	}
	if reused {
		for _, a := range selected {
			if a.Name == ChangelogArtifact {
				out = append(out, a)
			}
		}
	}
	return out
}

// dropUnavailable takes the artifacts that could not be downloaded out of
// the selection, and marks those that expired expired in the listing.
func dropUnavailable(selected, listing []schema.ArtifactListing, gone []*UnavailableError) ([]schema.ArtifactListing, []schema.ArtifactListing) {
	if len(gone) == 0 {
		return selected, listing
	}
	status := make(map[int64]int, len(gone))
	for _, g := range gone {
		status[g.Artifact.ID] = g.Status
	}
	kept := make([]schema.ArtifactListing, 0, len(selected))
	for _, a := range selected {
		if _, ok := status[a.ID]; !ok {
			kept = append(kept, a)
		}
	}
	out := slices.Clone(listing)
	for i, a := range out {
		if status[a.ID] == http.StatusGone {
			out[i].Expired = true
		}
	}
	return kept, out
}

// placeFile puts the cached file at dst: a hard link when the file system
// allows, else a copy; either way dst appears atomically.
func placeFile(src, dst string) error {
	// A new tree's files are absent: one link lays each, where replacing
	// an existing name takes two stats, a link and a rename.
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	if a, err := os.Stat(src); err == nil {
		if b, err := os.Stat(dst); err == nil && os.SameFile(a, b) {
			return nil
		}
	}
	// A name of its own, so concurrent ingests of one run do not collide.
	tmp := filepath.Join(filepath.Dir(dst), fmt.Sprintf(".place-%d-%d.tmp", os.Getpid(), rand.Int64()))
	if err := os.Link(src, tmp); err != nil {
		if err := copyFile(src, tmp); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func (c *Client) fullRepo() string { return c.owner + "/" + c.repo }

// artifactZip is the cached zip of the selected artifact named name.
func (c *Client) artifactZip(res *Result, name string) (string, bool) {
	for _, a := range res.Selected {
		if a.Name == name {
			return c.artifactPath(a.ID), true
		}
	}
	return "", false
}

// sameRepo reports whether owner/repo names this client's repository.
func (c *Client) sameRepo(owner, repo string) bool {
	return strings.EqualFold(owner, c.owner) && strings.EqualFold(repo, c.repo)
}
