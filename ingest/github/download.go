package github

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/inferencex/ingest/schema"
)

// errStalled marks a download that received nothing for StallTimeout.
var errStalled = errors.New("download stalled")

// errTooSlow marks a download try that outlived its deadline (its size at
// MinRate, plus StallTimeout): it is tried again, within FetchTimeout.
var errTooSlow = errors.New("download too slow")

// errTooLarge marks a blob that streams more than the listing's
// size_in_bytes: it is stopped at once and not tried again.
var errTooLarge = errors.New("more bytes than the listing says")

// errBudget marks a fetch that would write more than DownloadBudget.
var errBudget = errors.New("download budget spent")

// errBlobForbidden marks blob storage refusing the signed URL (it has
// expired): the redirect is requested again for a fresh one.
var errBlobForbidden = errors.New("blob storage refused the signed URL (403)")

// UnavailableError is an artifact the listing offered that the download
// endpoint then answered 410 Gone (it expired in between) or 404 Not Found
// (it was deleted): the fetch goes on without it and the ingest reports it
// as expired or missing, as `load` reports such a tree.
type UnavailableError struct {
	Artifact schema.ArtifactListing
	Status   int
	// Err, when set, is the archive's refusal of the upload's bytes (they
	// do not match the store's checksums): it is missing from the tree.
	Err error
}

func (e *UnavailableError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("artifact %s (id %d) not read from the archive: %v", e.Artifact.Name, e.Artifact.ID, e.Err)
	}
	if e.Status == http.StatusGone {
		return fmt.Sprintf("artifact %s (id %d): expired after the listing (410 Gone)", e.Artifact.Name, e.Artifact.ID)
	}
	return fmt.Sprintf("artifact %s (id %d): gone after the listing (404 Not Found)", e.Artifact.Name, e.Artifact.ID)
}

// byteBudget is what is left of a fetch's DownloadBudget.
type byteBudget struct {
	left  atomic.Int64
	limit int64
}

func newByteBudget(limit int64) *byteBudget {
	b := &byteBudget{limit: limit}
	b.left.Store(limit)
	return b
}

// spend takes n bytes, failing once the budget is spent.
func (b *byteBudget) spend(n int64) error {
	if b.left.Add(-n) < 0 {
		return fmt.Errorf("the fetch wrote more than its download budget of %s (--download-budget): %w", FormatBytes(b.limit), errBudget)
	}
	return nil
}

// FormatBytes writes n bytes with a binary unit (KiB, MiB, GiB) when it
// is a whole number of one.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// artifactPath is where the cache keeps artifact id's zip.
func (c *Client) artifactPath(id int64) string {
	return filepath.Join(c.opts.CacheDir, c.owner, c.repo, "artifacts", fmt.Sprintf("%d.zip", id))
}

// downloadStats counts what a batch of downloads did.
type downloadStats struct {
	Downloaded int
	Cached     int
	Bytes      int64
	// Unavailable are the artifacts that expired or vanished between the
	// listing and their download.
	Unavailable []*UnavailableError
	// Late are the artifacts that expired or vanished between the listing
	// and their download and were then read from the archive (auto).
	Late []*UnavailableError
}

// lateArchive takes from the archive the artifacts GitHub stops serving
// between its listing and their download (auto): the archive's listing
// of the run is read once, at the first such artifact.
type lateArchive struct {
	runID   int64
	once    sync.Once
	uploads map[int64]bool
	err     error
}

// from brings a into the cache from the archive; ok is false when the
// archive does not hold that upload.
func (l *lateArchive) from(ctx context.Context, c *Client, a schema.ArtifactListing, budget *byteBudget) (n int64, cached, ok bool, err error) {
	l.once.Do(func() {
		arch, err := c.opts.Archive.Contents(ctx, l.runID)
		if err != nil {
			l.err = fmt.Errorf("archive %s: run %d: %w", c.opts.Archive, l.runID, err)
			return
		}
		l.uploads = map[int64]bool{}
		if arch != nil {
			for _, u := range arch.Uploads {
				l.uploads[u.ID] = true
			}
		}
	})
	if l.err != nil {
		return 0, false, false, l.err
	}
	if !l.uploads[a.ID] {
		return 0, false, false, nil
	}
	n, cached, err = c.fromArchive(ctx, a, budget)
	return n, cached, err == nil, err
}

// downloadAll brings every artifact into the cache, at most Parallel at a
// time. The first failure is returned, naming the artifact; an artifact
// that expired or vanished since the listing is not a failure (see
// UnavailableError): late, when set, takes it from the archive.
func (c *Client) downloadAll(ctx context.Context, list []schema.ArtifactListing, fromArchive map[int64]bool, late *lateArchive) (downloadStats, error) {
	dir := filepath.Join(c.opts.CacheDir, c.owner, c.repo, "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return downloadStats{}, fmt.Errorf("cache: %w", err)
	}
	removeStaleParts(dir, time.Now().Add(-staleAfter), c.log)
	prog := c.opts.Progress
	if prog == nil {
		prog = newLogProgress(c.log)
	}
	var total int64
	for _, a := range list {
		total += max(a.SizeInBytes, 0)
	}
	if total > c.opts.DownloadBudget {
		return downloadStats{}, fmt.Errorf("the %d selected artifacts are listed at %s, more than the download budget of %s (--download-budget): %w",
			len(list), FormatBytes(total), FormatBytes(c.opts.DownloadBudget), errBudget)
	}
	budget := newByteBudget(c.opts.DownloadBudget)
	prog.Start(len(list), total)
	var (
		mu    sync.Mutex
		stats downloadStats
	)
	// After a failure no new download starts, but those under way finish
	// into the cache: a rerun then has less to fetch.
	var failed atomic.Bool
	var g errgroup.Group
	g.SetLimit(c.opts.Parallel)
	for _, a := range list {
		g.Go(func() error {
			if failed.Load() {
				return nil
			}
			var n int64
			var cached bool
			var err error
			if fromArchive[a.ID] {
				n, cached, err = c.fromArchive(ctx, a, budget)
			} else {
				n, cached, err = c.download(ctx, a, budget)
			}
			var gone *UnavailableError
			if errors.As(err, &gone) && gone.Err == nil && late != nil {
				var ok bool
				n, cached, ok, err = late.from(ctx, c, a, budget)
				switch {
				case ok:
					c.log.Info("artifact gone from GitHub after the listing: read from the archive", zap.String("artifact", a.Name),
						zap.Int64("id", a.ID), zap.Int("status", gone.Status))
					mu.Lock()
					stats.Late = append(stats.Late, gone)
					mu.Unlock()
				case err == nil:
					err = gone // the archive does not hold it
				case errors.As(err, new(*UnavailableError)):
					// The archive's copy is corrupt: the artifact is missing.
				case ctx.Err() != nil:
				default:
					c.log.Warn("artifact gone from GitHub after the listing, and the archive could not be read", zap.String("artifact", a.Name),
						zap.Int64("id", a.ID), zap.Error(err))
					err = gone
				}
			}
			if errors.As(err, &gone) {
				c.log.Warn("artifact no longer downloadable: the ingest reports it", zap.String("artifact", a.Name),
					zap.Int64("id", a.ID), zap.Int("status", gone.Status))
				mu.Lock()
				stats.Unavailable = append(stats.Unavailable, gone)
				mu.Unlock()
				prog.Done(a.Name, 0, false)
				return nil
			}
			if err != nil {
				failed.Store(true)
				return err
			}
			mu.Lock()
			if cached {
				stats.Cached++
			} else {
				stats.Downloaded++
				stats.Bytes += n
			}
			mu.Unlock()
			prog.Done(a.Name, n, cached)
			return nil
		})
	}
	err := g.Wait()
	prog.Finish(err)
	return stats, err
}

// staleAfter is the age from which a partial download whose process
// cannot be told is taken to be left over by a process that died.
const staleAfter = time.Hour

// partPattern names a partial download: the artifact id, the pid of the
// process writing it, and a random part (os.CreateTemp's "*").
func partPattern(id int64) string { return fmt.Sprintf(".%d-pid%d-*.part", id, os.Getpid()) }

// removeStaleParts deletes the partial downloads that no live process is
// writing: those named with the pid of a process that no longer runs (one
// killed mid-download, even by SIGKILL), and any older than before. A
// live process removes or renames its own on every other way out.
func removeStaleParts(dir string, before time.Time, log *zap.Logger) {
	parts, _ := filepath.Glob(filepath.Join(dir, ".*.part"))
	for _, p := range parts {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		pid, hasPID := partPID(filepath.Base(p))
		dead := hasPID && pid != os.Getpid() && !processAlive(pid)
		if dead || fi.ModTime().Before(before) {
			if os.Remove(p) == nil {
				log.Info("removed a partial download left over by a process that died", zap.String("file", p), zap.Int64("bytes", fi.Size()))
			}
		}
	}
}

// partPID reads the pid out of a partial download's name.
func partPID(name string) (int, bool) {
	_, rest, ok := strings.Cut(name, "-pid")
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

// download brings one artifact into the cache unless it is there already.
// It returns the zip's size and whether it was a cache hit.
func (c *Client) download(ctx context.Context, a schema.ArtifactListing, budget *byteBudget) (int64, bool, error) {
	path := c.artifactPath(a.ID)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && (a.SizeInBytes <= 0 || fi.Size() == a.SizeInBytes) {
		c.log.Debug("artifact cached", zap.String("artifact", a.Name), zap.Int64("id", a.ID))
		return fi.Size(), true, nil
	}
	what := fmt.Sprintf("artifact %s (id %d): download", a.Name, a.ID)
	var size int64
	started := time.Now()
	var gone *UnavailableError
	err := c.do(ctx, what, 0, func(ctx context.Context) (*http.Response, error) {
		rctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
		loc, resp, err := c.gh.Actions.DownloadArtifact(rctx, c.owner, c.repo, a.ID, 0)
		cancel()
		if err != nil {
			if r := ghResponse(resp); r != nil && (r.StatusCode == http.StatusGone || r.StatusCode == http.StatusNotFound) {
				gone = &UnavailableError{Artifact: a, Status: r.StatusCode}
				return r, gone
			}
			return ghResponse(resp), err
		}
		n, resp2, err := c.fetchBlob(ctx, loc, a, path, budget)
		size = n
		return resp2, err
	})
	if gone != nil && errors.As(err, &gone) {
		return 0, false, gone
	}
	if err != nil {
		return 0, false, err
	}
	c.log.Debug("artifact downloaded", zap.String("artifact", a.Name), zap.Int64("id", a.ID),
		zap.Int64("bytes", size), zap.Duration("took", time.Since(started)))
	return size, false, nil
}

// fromArchive brings one artifact from the archive into the cache; bytes
// the archive refuses (a checksum mismatch) make it unavailable.
func (c *Client) fromArchive(ctx context.Context, a schema.ArtifactListing, budget *byteBudget) (int64, bool, error) {
	n, cached, err := c.opts.Archive.Download(ctx, a, c.artifactPath(a.ID))
	if err != nil {
		if corrupt(err) {
			return 0, false, &UnavailableError{Artifact: a, Err: err}
		}
		return 0, false, fmt.Errorf("artifact %s (id %d): %w", a.Name, a.ID, err)
	}
	if !cached {
		if err := budget.spend(n); err != nil {
			return n, false, err
		}
	}
	return n, cached, nil
}

// deadline is how long one try of a download may take: its listed size at
// MinRate, plus twice StallTimeout (so that a try that stalls outright is
// told apart as stalled).
func (c *Client) deadline(size int64) time.Duration {
	return 2*c.opts.StallTimeout + time.Duration(float64(max(size, 0))/float64(c.opts.MinRate)*float64(time.Second))
}

// fetchBlob downloads the archive from blob storage (no token: the signed
// URL is the credential) into a temporary file, checks its size and
// digest, and renames it into place. It stops the moment the body passes
// the listed size or the fetch's budget, and when the try outlives its
// deadline; the temporary file is removed on every way out but success.
func (c *Client) fetchBlob(ctx context.Context, loc *url.URL, a schema.ArtifactListing, path string, budget *byteBudget) (int64, *http.Response, error) {
	if loc != nil && !loc.IsAbs() {
		loc = c.gh.BaseURL.ResolveReference(loc)
	}
	if loc == nil || (loc.Scheme != "https" && loc.Scheme != "http") {
		return 0, nil, fmt.Errorf("archive redirect to %q is not an http(s) URL", redactURL(loc))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// A stall timer cancels the request when no byte arrives for
	// StallTimeout; every read that makes progress resets it. The
	// deadline does not move: a trickle of bytes cannot keep a try alive.
	stall := time.AfterFunc(c.opts.StallTimeout, func() { cancel(errStalled) })
	defer stall.Stop()
	limit := c.deadline(a.SizeInBytes)
	tooSlow := fmt.Errorf("not done within %s (%s listed, at the minimum rate of %s/s, plus twice the stall timeout of %s): %w",
		limit.Round(time.Millisecond), FormatBytes(a.SizeInBytes), FormatBytes(c.opts.MinRate), c.opts.StallTimeout, errTooSlow)
	dl := time.AfterFunc(limit, func() { cancel(tooSlow) })
	defer dl.Stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return 0, nil, fmt.Errorf("archive request: %w", err)
	}
	resp, err := c.blob.Do(req)
	if err != nil {
		return 0, nil, c.blobErr(ctx, loc, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return 0, nil, fmt.Errorf("blob storage %s: %w", redactURL(loc), errBlobForbidden)
	}
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return 0, resp, fmt.Errorf("blob storage %s answered %s", redactURL(loc), resp.Status)
	}
	if a.SizeInBytes > 0 && resp.ContentLength > a.SizeInBytes {
		return 0, resp, fmt.Errorf("blob storage announces %d bytes, the listing says %d: %w", resp.ContentLength, a.SizeInBytes, errTooLarge)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), partPattern(a.ID))
	if err != nil {
		return 0, resp, fmt.Errorf("cache: %w", err)
	}
	tmpName := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	sum := sha256.New()
	body := &cappedReader{r: &progressReader{r: resp.Body, stall: stall, d: c.opts.StallTimeout}, listed: a.SizeInBytes, budget: budget}
	n, err := io.Copy(io.MultiWriter(tmp, sum), body)
	if err != nil {
		if errors.Is(err, errTooLarge) || errors.Is(err, errBudget) {
			return n, resp, err
		}
		return n, resp, c.blobErr(ctx, loc, err)
	}
	if err := verify(a, n, sum); err != nil {
		return n, resp, err
	}
	if err := tmp.Close(); err != nil {
		return n, resp, fmt.Errorf("cache: %w", err)
	}
	if err := os.Rename(tmpName, path); err != nil {
		return n, resp, fmt.Errorf("cache: %w", err)
	}
	ok = true
	return n, resp, nil
}

// cappedReader fails the read that takes a body past its listed size (0:
// unknown) or the fetch past its budget, before those bytes are written.
type cappedReader struct {
	r      io.Reader
	listed int64
	read   int64
	budget *byteBudget
}

func (c *cappedReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if n > 0 {
		c.read += int64(n)
		if c.listed > 0 && c.read > c.listed {
			return 0, fmt.Errorf("blob storage sent more than the listed %d bytes: stopped at %d: %w", c.listed, c.read, errTooLarge)
		}
		if berr := c.budget.spend(int64(n)); berr != nil {
			return 0, berr
		}
	}
	return n, err
}

// blobErr words a transport error of a blob request without the signed
// URL's query, keeping what classify needs.
func (c *Client) blobErr(ctx context.Context, loc *url.URL, err error) error {
	if cause := context.Cause(ctx); errors.Is(cause, errStalled) {
		return fmt.Errorf("blob storage %s: no data for %s: %w", redactURL(loc), c.opts.StallTimeout, errStalled)
	} else if errors.Is(cause, errTooSlow) {
		return fmt.Errorf("blob storage %s: %w", redactURL(loc), cause)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("blob storage %s: %w", redactURL(loc), err)
}

// verify checks a download against the listing's size and digest.
func verify(a schema.ArtifactListing, n int64, sum hash.Hash) error {
	if a.SizeInBytes > 0 && n != a.SizeInBytes {
		return fmt.Errorf("got %d bytes, the listing says %d: %w", n, a.SizeInBytes, errCorruptDownload)
	}
	if algo, want, ok := strings.Cut(a.Digest, ":"); ok && strings.EqualFold(algo, "sha256") {
		if got := hex.EncodeToString(sum.Sum(nil)); !strings.EqualFold(got, want) {
			return fmt.Errorf("sha256 %s, the listing says %s: %w", got, want, errCorruptDownload)
		}
	}
	return nil
}

// progressReader resets the stall timer on every read that returns data.
type progressReader struct {
	r     io.Reader
	stall *time.Timer
	d     time.Duration
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.stall.Reset(p.d)
	}
	return n, err
}
