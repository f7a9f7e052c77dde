package cli_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/archive/archivetest"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// mediaCounter stands in front of the fake GCS and counts the object
// downloads (alt=media) by artifact id.
type mediaCounter struct {
	mu  sync.Mutex
	got map[int64]int
}

var mediaZip = regexp.MustCompile(`_([0-9]+)\.zip$`)

func countingProxy(t *testing.T, target string) (*httptest.Server, *mediaCounter) {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	c := &mediaCounter{got: map[int64]int{}}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("alt") == "media" {
			if m := mediaZip.FindStringSubmatch(r.URL.Path); m != nil {
				id, _ := strconv.ParseInt(m[1], 10, 64)
				c.mu.Lock()
				c.got[id]++
				c.mu.Unlock()
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, c
}

// take returns the downloads counted so far and starts over.
func (c *mediaCounter) take() map[int64]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.got
	c.got = map[int64]int{}
	return got
}

// cachedIDs are the artifact ids whose zips are in the cache.
func cachedIDs(t *testing.T, cache string) map[int64]bool {
	t.Helper()
	zips, err := filepath.Glob(filepath.Join(cache, "*", "*", "artifacts", "*.zip"))
	require.NoError(t, err)
	out := map[int64]bool{}
	for _, z := range zips {
		id, err := strconv.ParseInt(filepath.Base(z[:len(z)-len(".zip")]), 10, 64)
		require.NoError(t, err)
		out[id] = true
	}
	return out
}

// TestBackfillArchiveResumesFromCache: a backfill of a gs:// archive
// stopped while a run is being ingested (its downloads done, its ingest
// waiting for the run's lock) — by SIGKILL, or cancelled as Ctrl-C does —
// resumes with the same command without downloading any object again:
// the stopped run is read from the cache, the next run is downloaded once.
func TestBackfillArchiveResumesFromCache(t *testing.T) {
	t.Parallel()
	const first, second = 28610000001, 28610000002
	mirror := writeArchive(t, []archivedRun{
		{id: first, date: "2026-03-01", metadata: true},
		{id: second, date: "2026-03-02"},
	})
	for _, stop := range []string{"SIGKILL", "cancelled"} {
		t.Run(stop, func(t *testing.T) {
			t.Parallel()
			fake, _ := archivetest.Serve(t, mirror, "backup", "ci")
			proxy, media := countingProxy(t, fake.URL())
			db := pgtest.New(t)
			cache := t.TempDir()
			vars := map[string]string{"DATABASE_URL": db, "INGEST_CACHE_DIR": cache, "INGEST_TARGET": "production",
				"STORAGE_EMULATOR_HOST": proxy.URL, "INGEST_ARCHIVE": "gs://backup/ci"}
			// One job: the second run is fetched only after the first, so
			// the stop finds it not downloaded yet.
			args := []string{"backfill", "--repo", "SemiAnalysisAI/InferenceX", "--source", "archive", "--jobs", "1"}
			tree := filepath.Join(cache, "SemiAnalysisAI", "InferenceX", "runs", strconv.Itoa(first))

			// The first run's ingest waits for its lock: the pass is stopped
			// once its tree is laid out, every download of it done.
			_, release := holdRunLock(t, db, "test-holder", first)
			laidOut := func() bool { _, err := os.Stat(filepath.Join(tree, "artifacts.json")); return err == nil }
			if stop == "SIGKILL" {
				w := startWorker(t, vars, args...)
				require.Eventually(t, func() bool { return laidOut() || w.exited() }, 2*time.Minute, 20*time.Millisecond)
				require.False(t, w.exited(), "the worker ended before the run was laid out:\n%s", w.stderr.String())
				require.NoError(t, w.cmd.Process.Signal(syscall.SIGKILL))
				w.wait(t)
			} else {
				ctx, cancel := context.WithCancel(t.Context())
				go func() {
					defer cancel()
					for ctx.Err() == nil && !laidOut() {
						time.Sleep(20 * time.Millisecond)
					}
				}()
				r := runCtx(ctx, vars, args...)
				cancel()
				requireCode(t, cli.ExitAborted, r)
			}
			release()
			before := media.take()
			require.NotEmpty(t, before, "the first pass downloaded the first run")
			kept := cachedIDs(t, cache)
			for id := range before {
				require.True(t, kept[id], "artifact %d downloaded before the stop is in the cache", id)
			}

			r := run(t, vars, args...)
			requireCode(t, cli.ExitOK, r)
			again := media.take()
			for id, n := range again {
				require.False(t, before[id] > 0, "artifact %d downloaded again after the stop", id)
				require.Equal(t, 1, n, "artifact %d downloaded once", id)
			}
			require.NotEmpty(t, again, "the second run is downloaded by the resumed pass")
			require.Equal(t, []int64{1, 1}, queryInt64s(t, db,
				`SELECT count(*) FROM ingests WHERE github_run_id IN ($1, $2) AND status = 'succeeded' GROUP BY github_run_id ORDER BY github_run_id`,
				first, second))
		})
	}
}
