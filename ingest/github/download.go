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

// artifactPath is where the cache keeps artifact id's zip.
func (c *Client) artifactPath(id int64) string {
	return filepath.Join(c.opts.CacheDir, c.owner, c.repo, "artifacts", fmt.Sprintf("%d.zip", id))
}

// downloadStats counts what a batch of downloads did.
type downloadStats struct {
	Downloaded int
	Cached     int
	Bytes      int64
}

// downloadAll brings every artifact into the cache, at most Parallel at a
// time. The first failure is returned, naming the artifact.
func (c *Client) downloadAll(ctx context.Context, list []schema.ArtifactListing) (downloadStats, error) {
	dir := filepath.Join(c.opts.CacheDir, c.owner, c.repo, "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return downloadStats{}, fmt.Errorf("cache: %w", err)
	}
	removeStaleParts(dir, time.Now().Add(-staleAfter))
	prog := c.opts.Progress
	if prog == nil {
		prog = newLogProgress(c.log)
	}
	var total int64
	for _, a := range list {
		total += a.SizeInBytes
	}
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
			n, cached, err := c.download(ctx, a)
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

// staleAfter is the age from which a partial download is taken to be
// left over by a process that died.
const staleAfter = time.Hour

// removeStaleParts deletes partial downloads older than before: those of a
// process that was killed mid-download (a live one renames or removes its
// own).
func removeStaleParts(dir string, before time.Time) {
	parts, _ := filepath.Glob(filepath.Join(dir, ".*.part"))
	for _, p := range parts {
		if fi, err := os.Stat(p); err == nil && fi.ModTime().Before(before) {
			os.Remove(p)
		}
	}
}

// download brings one artifact into the cache unless it is there already.
// It returns the zip's size and whether it was a cache hit.
func (c *Client) download(ctx context.Context, a schema.ArtifactListing) (int64, bool, error) {
	path := c.artifactPath(a.ID)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && (a.SizeInBytes <= 0 || fi.Size() == a.SizeInBytes) {
		c.log.Debug("artifact cached", zap.String("artifact", a.Name), zap.Int64("id", a.ID))
		return fi.Size(), true, nil
	}
	what := fmt.Sprintf("artifact %s (id %d): download", a.Name, a.ID)
	var size int64
	started := time.Now()
	err := c.do(ctx, what, 0, func(ctx context.Context) (*http.Response, error) {
		rctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
		loc, resp, err := c.gh.Actions.DownloadArtifact(rctx, c.owner, c.repo, a.ID, 0)
		cancel()
		if err != nil {
			if r := ghResponse(resp); r != nil && r.StatusCode == http.StatusGone {
				return r, fmt.Errorf("the artifact has expired (410 Gone)")
			}
			return ghResponse(resp), err
		}
		n, resp2, err := c.fetchBlob(ctx, loc, a, path)
		size = n
		return resp2, err
	})
	if err != nil {
		return 0, false, err
	}
	c.log.Debug("artifact downloaded", zap.String("artifact", a.Name), zap.Int64("id", a.ID),
		zap.Int64("bytes", size), zap.Duration("took", time.Since(started)))
	return size, false, nil
}

// fetchBlob downloads the archive from blob storage (no token: the signed
// URL is the credential) into a temporary file, checks its size and
// digest, and renames it into place.
func (c *Client) fetchBlob(ctx context.Context, loc *url.URL, a schema.ArtifactListing, path string) (int64, *http.Response, error) {
	if loc != nil && !loc.IsAbs() {
		loc = c.gh.BaseURL.ResolveReference(loc)
	}
	if loc == nil || (loc.Scheme != "https" && loc.Scheme != "http") {
		return 0, nil, fmt.Errorf("archive redirect to %q is not an http(s) URL", redactURL(loc))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// A stall timer cancels the request when no byte arrives for
	// StallTimeout; every read that makes progress resets it.
	stall := time.AfterFunc(c.opts.StallTimeout, func() { cancel(errStalled) })
	defer stall.Stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return 0, nil, fmt.Errorf("archive request: %w", err)
	}
	resp, err := c.blob.Do(req)
	if err != nil {
		return 0, nil, c.blobErr(ctx, loc, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return 0, resp, fmt.Errorf("blob storage %s answered %s", redactURL(loc), resp.Status)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), fmt.Sprintf(".%d-*.part", a.ID))
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
	n, err := io.Copy(io.MultiWriter(tmp, sum), &progressReader{r: resp.Body, stall: stall, d: c.opts.StallTimeout})
	if err != nil {
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

// blobErr words a transport error of a blob request without the signed
// URL's query, keeping what classify needs.
func (c *Client) blobErr(ctx context.Context, loc *url.URL, err error) error {
	if cause := context.Cause(ctx); errors.Is(cause, errStalled) {
		return fmt.Errorf("blob storage %s: no data for %s: %w", redactURL(loc), c.opts.StallTimeout, errStalled)
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
