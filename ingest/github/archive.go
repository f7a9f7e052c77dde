package github

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/schema"
)

// Archive is a second store of runs' artifacts (the project's artifact
// archive), which keeps them after GitHub's retention deletes them.
type Archive interface {
	// Contents lists what the archive holds of a run; nil when nothing.
	Contents(ctx context.Context, runID int64) (*schema.ArchivedRun, error)
	// Download brings a listed upload to path, verified, unless it is
	// there already; it returns the bytes and whether it was there.
	Download(ctx context.Context, a schema.ArtifactListing, path string) (int64, bool, error)
	// String names the archive (its URL).
	String() string
}

// Source says where a fetch takes a run's artifacts from.
type Source string

// The sources of a fetch.
const (
	// SourceAuto takes each artifact from GitHub while it is unexpired
	// there, else from the archive (with no token: the archive only).
	SourceAuto Source = "auto"
	// SourceGitHub takes artifacts from GitHub only.
	SourceGitHub Source = "github"
	// SourceArchive takes artifacts from the archive only (run facts from
	// GitHub when a token is set).
	SourceArchive Source = "archive"
)

// ParseSource reads a --source value.
func ParseSource(s string) (Source, error) {
	switch Source(s) {
	case SourceAuto, SourceGitHub, SourceArchive:
		return Source(s), nil
	}
	return "", fmt.Errorf("%q is no source: want auto, github or archive", s)
}

// ErrNotArchived is the error of an archive-only fetch of a run the
// archive does not hold.
var ErrNotArchived = errors.New("not in the archive")

// corrupt reports whether err is one artifact's bad bytes (the archive's
// verification), not a failure of the fetch.
func corrupt(err error) bool {
	var c interface{ Corrupt() bool }
	return errors.As(err, &c) && c.Corrupt()
}

// source resolves the request's source against the client's setup.
func (c *Client) source(req Request) (Source, error) {
	src := req.Source
	if src == "" {
		src = SourceGitHub
		if c.opts.Archive != nil {
			src = SourceAuto
		}
	}
	if src != SourceGitHub && c.opts.Archive == nil {
		return "", fmt.Errorf("source %s needs an archive (--archive)", src)
	}
	if src == SourceAuto && c.opts.Token == "" {
		src = SourceArchive
	}
	if src == SourceArchive && req.MergeRunID != 0 && req.MergeRunID != req.SourceRunID {
		return "", errors.New("a reused sweep (a merge run other than the source run) is fetched from GitHub, not the archive")
	}
	return src, nil
}

// fetchArchive fetches a run from the archive alone: its facts from GitHub
// when a token is set (GitHub keeps runs long after their artifacts),
// else from the archive.
func (c *Client) fetchArchive(ctx context.Context, req Request, res *Result) (map[int64]bool, error) {
	arch := req.Archived
	var err error
	if arch == nil {
		if arch, err = c.opts.Archive.Contents(ctx, req.SourceRunID); err != nil {
			return nil, fmt.Errorf("archive %s: run %d: %w", c.opts.Archive, req.SourceRunID, err)
		}
	}
	if arch == nil || len(arch.Uploads) == 0 {
		return nil, fmt.Errorf("run %d: %w %s", req.SourceRunID, ErrNotArchived, c.opts.Archive)
	}
	res.Source = Run{Meta: arch.Meta}
	if c.opts.Token != "" {
		run, err := c.GetRun(ctx, req.SourceRunID)
		switch {
		case IsAuthError(err) || ctx.Err() != nil:
			return nil, fmt.Errorf("source run: %w", err)
		case err != nil:
			c.log.Warn("GitHub does not give the run's facts: they are taken from the archive", zap.Int64("run", req.SourceRunID), zap.Error(err))
			res.Notes = append(res.Notes, fmt.Sprintf("run facts inferred from the archive (GitHub: %v): %s", err, strings.Join(arch.Inferred, "; ")))
		default:
			res.Source = run
		}
	} else {
		res.Notes = append(res.Notes, "run facts inferred from the archive (no GitHub token): "+strings.Join(arch.Inferred, "; "))
	}
	if req.Attempt != 0 && res.Source.Meta.RunAttempt != 0 && req.Attempt != res.Source.Meta.RunAttempt {
		return nil, fmt.Errorf("source run %d: GitHub reports attempt %d, not the requested attempt %d", req.SourceRunID, res.Source.Meta.RunAttempt, req.Attempt)
	}
	from := make(map[int64]bool, len(arch.Uploads))
	for _, a := range arch.Uploads {
		from[a.ID] = true
	}
	res.Merge = res.Source
	if res.Selected, err = selectByID(req.SourceRunID, arch.Uploads); err != nil {
		return nil, err
	}
	res.Listed = slices.Clone(arch.Uploads)
	return from, nil
}

// selectByID selects per name the upload with the largest artifact id:
// the archive's upload times are the copier's, not GitHub's, and ids grow
// in GitHub's creation order.
func selectByID(runID int64, list []schema.ArtifactListing) ([]schema.ArtifactListing, error) {
	bare := slices.Clone(list)
	byID := make(map[int64]schema.ArtifactListing, len(list))
	for i := range bare {
		byID[bare[i].ID] = bare[i]
		bare[i].CreatedAt = time.Time{}
	}
	picked, err := Select(runID, runID, bare, nil)
	if err != nil {
		return nil, err
	}
	for i, p := range picked {
		picked[i] = byID[p.ID]
	}
	return picked, nil
}

// fillFromArchive completes GitHub's listing from the archive: every name
// with no unexpired upload on GitHub takes the archive's uploads of it
// (replacing GitHub's expired entries of the same ids, whose created_at
// they keep). It returns the listing and the ids taken from the archive.
func (c *Client) fillFromArchive(ctx context.Context, runID int64, list []schema.ArtifactListing, res *Result) ([]schema.ArtifactListing, map[int64]bool, error) {
	live := map[string]bool{}
	expired := false
	for _, a := range list {
		if a.Expired {
			expired = true
		} else {
			live[a.Name] = true
		}
	}
	if !expired {
		return list, nil, nil
	}
	arch, err := c.opts.Archive.Contents(ctx, runID)
	if err != nil {
		return nil, nil, fmt.Errorf("archive %s: run %d: %w", c.opts.Archive, runID, err)
	}
	if arch == nil {
		res.Notes = append(res.Notes, fmt.Sprintf("the archive %s does not hold run %d: its expired artifacts are not read", c.opts.Archive, runID))
		return list, nil, nil
	}
	at := map[int64]int{}
	for i, a := range list {
		at[a.ID] = i
	}
	out := slices.Clone(list)
	from := map[int64]bool{}
	for _, a := range arch.Uploads {
		if live[a.Name] {
			continue
		}
		from[a.ID] = true
		if i, ok := at[a.ID]; ok {
			if a.CreatedAt.IsZero() {
				a.CreatedAt = out[i].CreatedAt
			}
			if a.Digest == "" {
				a.Digest = out[i].Digest
			}
			out[i] = a
			continue
		}
		out = append(out, a)
	}
	return out, from, nil
}

// provenance is the report's note of where the selected artifacts came
// from.
func (c *Client) provenance(res *Result, from map[int64]bool) {
	var names []string
	for _, a := range res.Selected {
		if from[a.ID] {
			names = append(names, a.Name)
		}
	}
	res.FromArchive = names
	switch {
	case len(names) == 0:
		return
	case len(names) == len(res.Selected):
		res.Notes = append(res.Notes, fmt.Sprintf("all %d artifacts were read from the archive %s", len(names), c.opts.Archive))
	default:
		shown := names
		more := ""
		if len(shown) > 10 {
			shown, more = shown[:10], fmt.Sprintf(" and %d more", len(names)-10)
		}
		res.Notes = append(res.Notes, fmt.Sprintf("%d of %d artifacts were read from the archive %s (expired on GitHub), the others from GitHub: %s%s",
			len(names), len(res.Selected), c.opts.Archive, strings.Join(shown, ", "), more))
	}
}
