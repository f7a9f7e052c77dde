package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

// apiListing is a GitHub REST response as saved by a downloader, with the
// extra "run" object and fields the parser must ignore.
const apiListing = `{
  "total_count": 2,
  "artifacts": [
    {
      "id": 4100000001,
      "node_id": "MDg6QXJ0aWZhY3Q0MTAwMDAwMDAx",
      "name": "bmk_dsr1_8k1k_conc64_b200-dgxc_03",
      "size_in_bytes": 1234,
      "url": "https://api.github.com/repos/SemiAnalysisAI/InferenceX/actions/artifacts/4100000001",
      "archive_download_url": "https://api.github.com/repos/SemiAnalysisAI/InferenceX/actions/artifacts/4100000001/zip",
      "expired": false,
      "digest": "sha256:0000000000000000000000000000000000000000000000000000000000000001",
      "created_at": "2026-09-23T10:00:00Z",
      "updated_at": "2026-09-23T10:00:00Z",
      "expires_at": "2026-12-22T10:00:00Z",
      "workflow_run": {"id": 17000000001, "repository_id": 1, "head_repository_id": 1, "head_branch": "main", "head_sha": "843c6254aaaa"}
    },
    {
      "id": 4100000002,
      "name": "run-stats",
      "size_in_bytes": 99,
      "archive_download_url": "https://example.invalid/zip",
      "expired": true,
      "digest": null,
      "created_at": "2026-09-23T11:30:00.5+02:00",
      "workflow_run": {"id": 17000000001, "head_branch": "main", "head_sha": "843c6254aaaa"}
    }
  ]%s
}`

const runObject = `,
  "run": {
    "id": 17000000001, "run_attempt": 2, "name": "Run Sweep", "event": "push",
    "status": "completed", "conclusion": "failure", "head_sha": "843c6254ffff",
    "head_branch": "release", "html_url": "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/17000000001",
    "created_at": "2026-09-23T09:00:00Z", "run_started_at": "2026-09-23T09:05:00Z",
    "head_commit": {"id": "843c6254ffff", "message": "ignored"}
  }`

func TestParseListing(t *testing.T) {
	t.Parallel()
	t10 := time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)
	apiEntries := []schema.ArtifactListing{
		{ID: 4100000001, Name: "bmk_dsr1_8k1k_conc64_b200-dgxc_03", CreatedAt: t10, SizeInBytes: 1234,
			Digest: "sha256:0000000000000000000000000000000000000000000000000000000000000001"},
		{ID: 4100000002, Name: "run-stats", CreatedAt: time.Date(2026, 9, 23, 9, 30, 0, 5e8, time.UTC), SizeInBytes: 99, Expired: true},
	}
	fromWorkflowRun := schema.RunMeta{RunID: 17000000001, HeadBranch: "main", HeadSHA: "843c6254aaaa"}
	fullRun := schema.RunMeta{
		RunID: 17000000001, RunAttempt: 2, Name: "Run Sweep", Event: "push", Status: "completed",
		Conclusion: "failure", HeadSHA: "843c6254ffff", HeadBranch: "release",
		HTMLURL:   "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/17000000001",
		CreatedAt: time.Date(2026, 9, 23, 9, 0, 0, 0, time.UTC), RunStartedAt: time.Date(2026, 9, 23, 9, 5, 0, 0, time.UTC),
	}
	manifestEntries := []schema.ArtifactListing{
		{ID: 11, Name: "bmk_a", CreatedAt: t10},
		{ID: 0, Name: "bmk_b", CreatedAt: t10.Add(time.Minute), Expired: true},
	}
	tests := []struct {
		name    string
		input   string
		want    []schema.ArtifactListing
		wantRun schema.RunMeta
		wantErr string
	}{
		{name: "api response with run object", input: strings.Replace(apiListing, "%s", runObject, 1), want: apiEntries, wantRun: fullRun},
		{name: "api response without run object", input: strings.Replace(apiListing, "%s", "", 1), want: apiEntries, wantRun: fromWorkflowRun},
		{
			name: "bare array",
			input: `[{"id": 1, "name": "bmk_a", "created_at": "2026-09-23T10:00:00Z", "size_in_bytes": 5, "expired": false,
			         "workflow_run": {"id": 99, "head_branch": "main", "head_sha": "abc"}}]`,
			want:    []schema.ArtifactListing{{ID: 1, Name: "bmk_a", CreatedAt: t10, SizeInBytes: 5}},
			wantRun: schema.RunMeta{RunID: 99, HeadBranch: "main", HeadSHA: "abc"},
		},
		{
			name: "reference manifest",
			input: `[
  {"id": 11, "name": "bmk_a", "archive_download_url": "https://x/11/zip", "created_at": "2026-09-23T10:00:00Z", "expired": false},
  {"name": "bmk_b", "archive_download_url": "https://x/12/zip", "created_at": "2026-09-23T10:01:00Z", "expired": true}
]`,
			want: manifestEntries,
		},
		{
			name:  "paginated pages and jq lines",
			input: `{"total_count":2,"artifacts":[{"id":11,"name":"bmk_a","created_at":"2026-09-23T10:00:00Z"}]}` + "\n" + `{"id":0,"name":"bmk_b","created_at":"2026-09-23T10:01:00Z","expired":true}`,
			want:  manifestEntries,
		},
		{name: "empty array", input: `[]`, want: nil},
		{name: "null created_at is unknown", input: `[{"id":1,"name":"a","created_at":null}]`, want: []schema.ArtifactListing{{ID: 1, Name: "a"}}},
		{name: "empty file", input: " \n", wantErr: "empty file"},
		{name: "not JSON", input: `{"artifacts": [`, wantErr: "invalid JSON"},
		{name: "trailing garbage", input: `[] nope`, wantErr: "invalid JSON"},
		{name: "scalar", input: `"artifacts"`, wantErr: "neither an object nor an array"},
		{name: "object without artifacts", input: `{"total_count": 0}`, wantErr: `neither an "artifacts" array nor a "name"`},
		{name: "artifacts not an array", input: `{"artifacts": {"name": "x"}}`, wantErr: `"artifacts" is not an array`},
		{name: "entry without name", input: `[{"id": 1}]`, wantErr: "artifact 0: no name"},
		{name: "bad created_at", input: `[{"id": 1, "name": "bmk_a", "created_at": "yesterday"}]`, wantErr: "artifact 0: bmk_a: created_at"},
		{name: "bad id", input: `[{"id": "one", "name": "bmk_a"}]`, wantErr: "artifact array"},
		{name: "bad run time", input: `{"artifacts": [], "run": {"created_at": "soon"}}`, wantErr: "run: created_at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := parseListing(strings.NewReader(tt.input))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, doc.entries)
			require.Equal(t, tt.wantRun, doc.run)
		})
	}
}

func TestTreeListingFiles(t *testing.T) {
	t.Parallel()
	const artifactsJSON = `{"total_count":1,"artifacts":[{"id":1,"name":"bmk_a","created_at":"2026-09-23T10:00:00Z"}]}`
	const manifestJSON = `[{"id":2,"name":"bmk_a","created_at":"2026-09-23T10:00:00Z"}]`
	tests := []struct {
		name        string
		files       map[string]string
		wantListing bool
		wantID      int64 // listing entry matched to bmk_a; 0 for none
		wantProblem *Problem
	}{
		{name: "no listing"},
		{name: "artifacts.json", files: map[string]string{ListingFile: artifactsJSON}, wantListing: true, wantID: 1},
		{name: "manifest alone", files: map[string]string{ManifestFile: manifestJSON}, wantListing: true, wantID: 2},
		{name: "artifacts.json wins over manifest", files: map[string]string{ListingFile: artifactsJSON, ManifestFile: manifestJSON}, wantListing: true, wantID: 1},
		{
			name:        "malformed artifacts.json",
			files:       map[string]string{ListingFile: `{"artifacts": [`},
			wantProblem: &Problem{File: ListingFile, Reason: "artifacts.json: invalid JSON: unexpected EOF"},
		},
		{
			name:        "malformed manifest",
			files:       map[string]string{ManifestFile: `42`},
			wantProblem: &Problem{File: ManifestFile, Reason: "ingest-artifact-manifest.json: top-level value is neither an object nor an array"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "bmk_a", "agg.json"), "{}")
			for name, body := range tt.files {
				writeFile(t, filepath.Join(dir, name), body)
			}
			tree := openTree(t, dir)
			require.Equal(t, tt.wantListing, tree.HasListing)
			a := tree.Artifact("bmk_a")
			if tt.wantID == 0 {
				require.Nil(t, a.Listing)
			} else {
				require.NotNil(t, a.Listing)
				require.Equal(t, tt.wantID, a.Listing.ID)
			}
			if tt.wantProblem == nil {
				require.Empty(t, tree.Problems)
			} else {
				require.Equal(t, []Problem{*tt.wantProblem}, tree.Problems)
				require.Empty(t, tree.Listing)
			}
		})
	}
}

func TestZipDigestAgainstListing(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)
	const otherDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	tests := []struct {
		name    string
		listing func(own string) []schema.ArtifactListing
		wantID  int64
		wantErr bool
	}{
		{
			name: "own digest matches the older of two uploads",
			listing: func(own string) []schema.ArtifactListing {
				return []schema.ArtifactListing{
					{ID: 1, Name: "bmk_x", CreatedAt: t0, Digest: own},
					{ID: 2, Name: "bmk_x", CreatedAt: t0.Add(time.Hour), Digest: otherDigest},
				}
			},
			wantID: 1,
		},
		{
			name: "newest upload without digest",
			listing: func(string) []schema.ArtifactListing {
				return []schema.ArtifactListing{{ID: 1, Name: "bmk_x", CreatedAt: t0}, {ID: 2, Name: "bmk_x", CreatedAt: t0.Add(time.Hour)}}
			},
			wantID: 2,
		},
		{
			name: "digest mismatch",
			listing: func(string) []schema.ArtifactListing {
				return []schema.ArtifactListing{{ID: 1, Name: "bmk_x", CreatedAt: t0, Digest: otherDigest}}
			},
			wantID:  1,
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			data := writeZip(t, filepath.Join(dir, "bmk_x.zip"), []zipEntry{{name: "agg.json", body: "{}"}})
			own := digestOf(data)
			require.NoError(t, WriteListing(filepath.Join(dir, ListingFile), schema.RunMeta{}, tt.listing(own)))

			tree := openTree(t, dir)
			a := tree.Artifact("bmk_x")
			require.Equal(t, own, a.Digest)
			require.NotNil(t, a.Listing)
			require.Equal(t, tt.wantID, a.Listing.ID)
			if !tt.wantErr {
				require.NoError(t, a.Err)
				require.Equal(t, []string{"agg.json"}, a.Files)
				return
			}
			require.EqualError(t, a.Err, "artifact bmk_x: digest mismatch: listing says "+otherDigest+", zip is "+own)
			require.Empty(t, a.Files)
			_, err := a.FS()
			require.Error(t, err)
		})
	}
}

func TestWriteListingRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := schema.RunMeta{
		RunID: 17000000001, RunAttempt: 3, Name: "Run Sweep", Event: "push", Status: "completed",
		Conclusion: "success", HeadSHA: "843c6254", HeadBranch: "main",
		HTMLURL:   "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/17000000001",
		CreatedAt: time.Date(2026, 9, 23, 9, 0, 0, 0, time.UTC), RunStartedAt: time.Date(2026, 9, 23, 9, 5, 0, 123e6, time.UTC),
	}
	listing := []schema.ArtifactListing{
		{ID: 3, Name: "bmk_b", CreatedAt: time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC), SizeInBytes: 10,
			Digest: "sha256:2222222222222222222222222222222222222222222222222222222222222222"},
		{ID: 2, Name: "bmk_a", CreatedAt: time.Date(2026, 9, 23, 9, 59, 0, 0, time.UTC), Expired: true},
		{ID: 1, Name: "bmk_a"},
	}
	require.NoError(t, WriteListing(filepath.Join(dir, ListingFile), run, listing))
	tree := openTree(t, dir)
	require.True(t, tree.HasListing)
	require.Equal(t, listing, tree.Listing)
	require.Equal(t, run, tree.Run)
	require.Empty(t, tree.Problems, "no temporary file is left behind")

	// An unknown run writes no "run" object and reads back as unknown.
	require.NoError(t, WriteListing(filepath.Join(dir, ListingFile), schema.RunMeta{}, nil))
	data, err := os.ReadFile(filepath.Join(dir, ListingFile))
	require.NoError(t, err)
	require.Equal(t, "{\n  \"total_count\": 0,\n  \"artifacts\": []\n}\n", string(data))
	tree = openTree(t, dir)
	require.True(t, tree.HasListing)
	require.Empty(t, tree.Listing)
	require.Equal(t, schema.RunMeta{}, tree.Run)
}

func TestWriteListingError(t *testing.T) {
	t.Parallel()
	err := WriteListing(filepath.Join(t.TempDir(), "missing", ListingFile), schema.RunMeta{}, nil)
	require.ErrorContains(t, err, "listing ")
}
