package github_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
)

// zipArtifact is a demo artifact stored as a zip upstream.
const zipArtifact = "bmk_qwen3.5_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc512_b200-dgxc_06_recipe-341408ee19f26bfd"

// TestFetchFaults: every fault the fake can produce is retried to success
// or ends in a clear error naming what failed; the token never shows.
func TestFetchFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection with retries: not under -short")
	}
	t.Parallel()
	type fault = fakegithub.Fault
	tests := []struct {
		name    string
		faults  []fault
		token   string // default: the right one
		edit    func(*github.Options)
		runID   int64
		wantErr string // empty: the fetch succeeds
		wantLog string
	}{
		{name: "401 bad credentials", token: "ghs_wrong_TESTTOKEN_xx",
			wantErr: "run 28485856738: get run: GET http"},
		{name: "403 forbidden", faults: []fault{{Route: fakegithub.RouteArtifacts, Kind: fakegithub.Status, Status: 403, Message: "Resource not accessible by integration"}},
			wantErr: "run 28485856738: list artifacts (page 1): GET "},
		{name: "404 unknown run", runID: 999, wantErr: "source run: run 999: get run: GET "},
		{name: "429 with Retry-After", faults: []fault{{Route: fakegithub.RouteArtifacts, Kind: fakegithub.TooManyRequests, Times: 1}},
			wantLog: `"limit":"secondary","wait":1`},
		{name: "secondary rate limit 403 on the download", faults: []fault{{Route: fakegithub.RouteDownload, Artifact: "run-stats", Kind: fakegithub.SecondaryRateLimit, Times: 1}},
			wantLog: `"limit":"secondary"`},
		{name: "primary rate limit", faults: []fault{{Route: fakegithub.RouteRun, Kind: fakegithub.PrimaryRateLimit, Times: 1, RetryAfter: 1}},
			wantLog: `"limit":"primary"`},
		{name: "rate limit wait beyond the accepted maximum", faults: []fault{{Route: fakegithub.RouteRun, Kind: fakegithub.SecondaryRateLimit, RetryAfter: 3600}},
			wantErr: "secondary rate limit: the API asks to wait 1h0m0s, longer than the 5s accepted"},
		{name: "5xx then success", faults: []fault{{Route: fakegithub.RouteBlob, Artifact: "results_bmk", Kind: fakegithub.Status, Status: 502, Times: 2},
			{Route: fakegithub.RouteRun, Kind: fakegithub.Status, Status: 500, Times: 1}},
			wantLog: "request failed: retrying"},
		{name: "5xx for good", faults: []fault{{Route: fakegithub.RouteBlob, Artifact: "results_bmk", Kind: fakegithub.Status, Status: 503}},
			wantErr: "artifact results_bmk (id {id}): download: gave up after 4 attempts: blob storage http"},
		{name: "connection cut mid-download", faults: []fault{{Route: fakegithub.RouteBlob, Artifact: "results_bmk", Kind: fakegithub.CutConnection, Times: 2}},
			wantLog: "unexpected EOF"},
		{name: "connection cut on every try", faults: []fault{{Route: fakegithub.RouteBlob, Artifact: zipArtifact, Kind: fakegithub.CutConnection}},
			wantErr: "artifact " + zipArtifact + " (id {id}): download: gave up after 4 attempts"},
		{name: "API connection dropped", faults: []fault{{Route: fakegithub.RouteArtifacts, Kind: fakegithub.CutConnection, Times: 3}},
			wantLog: "request failed: retrying"},
		{name: "download stalls", faults: []fault{{Route: fakegithub.RouteBlob, Artifact: "run-stats", Kind: fakegithub.Hang, Times: 1}},
			wantLog: "no data for 300ms"},
		{name: "API request times out", faults: []fault{{Route: fakegithub.RouteRun, Kind: fakegithub.Hang, Times: 1}},
			edit:    func(o *github.Options) { o.RequestTimeout = 300 * time.Millisecond },
			wantLog: "context deadline exceeded"},
		{name: "corrupt bytes once", faults: []fault{{Route: fakegithub.RouteBlob, Artifact: "run-stats", Kind: fakegithub.Corrupt, Times: 1}},
			wantLog: "the listing says"},
		{name: "corrupt bytes always", faults: []fault{{Route: fakegithub.RouteBlob, Artifact: "run-stats", Kind: fakegithub.Corrupt}},
			wantErr: "artifact run-stats (id {id}): download: gave up after 4 attempts: sha256 "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			for _, f := range tt.faults {
				e.fake.Inject(f)
			}
			c := e.newClient(t, func(o *github.Options) {
				if tt.token != "" {
					o.Token = tt.token
				}
				if tt.edit != nil {
					tt.edit(o)
				}
			})
			runID := tt.runID
			if runID == 0 {
				runID = demoRunID
			}
			started := time.Now()
			res, err := c.Fetch(t.Context(), github.Request{SourceRunID: runID})
			took := time.Since(started)
			if tt.wantErr != "" {
				want := tt.wantErr
				if name := artifactOf(want); name != "" {
					want = strings.ReplaceAll(want, "{id}", e.id(t, name))
				}
				require.ErrorContains(t, err, want)
				e.requireNoToken(t, err.Error())
				if tt.token != "" {
					require.NotContains(t, err.Error()+e.logs.String(), "TESTTOKEN")
				}
				// No tree is laid out for a failed fetch.
				trees, _ := filepath.Glob(filepath.Join(e.cache, "*", "*", "runs", "*"))
				require.Empty(t, trees)
				return
			}
			require.NoError(t, err)
			require.Len(t, res.Selected, e.demoArtifacts)
			entries, err := os.ReadDir(res.Dir)
			require.NoError(t, err)
			require.Len(t, entries, e.demoArtifacts+1)
			require.Contains(t, e.logs.String(), tt.wantLog)
			e.requireNoToken(t)
			for _, f := range tt.faults {
				require.Positive(t, e.fake.Hits(f.Route), "fault on %s never struck", f.Route)
			}
			if strings.Contains(tt.wantLog, "limit") {
				require.GreaterOrEqual(t, took, 900*time.Millisecond, "the rate-limit wait was honoured")
			}
		})
	}
}

// artifactOf is the artifact an expected error names ("artifact NAME (id …").
func artifactOf(wantErr string) string {
	name, _, ok := strings.Cut(strings.TrimPrefix(wantErr, "artifact "), " (id {id})")
	if !ok {
		return ""
	}
	return name
}
