package source

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
		// manifest parses the reference's manifest, whose ids are optional.
		manifest bool
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
			want:     manifestEntries,
			manifest: true,
		},
		{
			name:     "paginated pages and jq lines",
			input:    `{"total_count":2,"artifacts":[{"id":11,"name":"bmk_a","created_at":"2026-09-23T10:00:00Z"}]}` + "\n" + `{"id":0,"name":"bmk_b","created_at":"2026-09-23T10:01:00Z","expired":true}`,
			want:     manifestEntries,
			manifest: true,
		},
		{name: "empty array", input: `[]`, want: nil},
		{name: "null created_at is unknown", input: `[{"id":1,"name":"a","created_at":null}]`, want: []schema.ArtifactListing{{ID: 1, Name: "a"}}},
		{name: "null digest is unknown", input: `[{"id":1,"name":"a","digest":null}]`, want: []schema.ArtifactListing{{ID: 1, Name: "a"}}},
		{
			name:  "one name uploaded twice is a retry",
			input: `[{"id":1,"name":"bmk_a","created_at":"2026-09-23T10:00:00Z"},{"id":2,"name":"bmk_a","created_at":"2026-09-23T10:01:00Z"}]`,
			want:  []schema.ArtifactListing{{ID: 1, Name: "bmk_a", CreatedAt: t10}, {ID: 2, Name: "bmk_a", CreatedAt: t10.Add(time.Minute)}},
		},
		{name: "empty file", input: " \n", wantErr: "empty file"},
		{name: "truncated", input: `{"artifacts": [`, wantErr: "invalid JSON: unexpected EOF"},
		{name: "trailing garbage", input: `[] nope`, wantErr: "invalid JSON"},
		{name: "scalar", input: `"artifacts"`, wantErr: "neither an object nor an array"},
		{name: "object without artifacts", input: `{"total_count": 0}`, wantErr: `neither an "artifacts" array nor a "name"`},
		{name: "artifacts not an array", input: `{"artifacts": {"name": "x"}}`, wantErr: `"artifacts" is not an array`},
		{name: "entry not an object", input: `{"artifacts": [42]}`, wantErr: "artifact 0: not an object"},
		{name: "null entry", input: `[null]`, wantErr: "artifact 0: not an object"},
		{name: "entry without name", input: `[{"id": 1}]`, wantErr: "artifact 0: no name"},
		{name: "entry without id", input: `[{"name": "bmk_a"}]`, wantErr: "artifact 0: bmk_a: no id"},
		{name: "negative id", input: `[{"id": -4, "name": "bmk_a"}]`, wantErr: "artifact 0: bmk_a: id -4 is negative"},
		{name: "id listed twice", input: `[{"id": 7, "name": "bmk_a"}, {"id": 7, "name": "bmk_b"}]`, wantErr: "artifact 1: bmk_b: id 7 is listed twice (also artifact 0)"},
		{name: "negative size", input: `[{"id": 1, "name": "bmk_a", "size_in_bytes": -1}]`, wantErr: "artifact 0: bmk_a: size_in_bytes -1 is negative"},
		{name: "digest of another kind", input: `[{"id": 1, "name": "bmk_a", "digest": "md5:0cc175b9c0f1b6a831c399e269772661"}]`,
			wantErr: `artifact 0: bmk_a: digest "md5:0cc175b9c0f1b6a831c399e269772661" is not "sha256:" and 64 hex digits`},
		{name: "short digest", input: `[{"id": 1, "name": "bmk_a", "digest": "sha256:00"}]`, wantErr: `digest "sha256:00" is not "sha256:" and 64 hex digits`},
		{name: "empty digest", input: `[{"id": 1, "name": "bmk_a", "digest": ""}]`, wantErr: `digest "" is not`},
		{name: "bad created_at", input: `[{"id": 1, "name": "bmk_a", "created_at": "yesterday"}]`, wantErr: "artifact 0: bmk_a: created_at"},
		{name: "id is a string", input: `[{"id": "one", "name": "bmk_a"}]`, wantErr: `artifact 0: field "id": string where an integer is expected`},
		{name: "id is a fraction", input: `{"artifacts": [{"id": 1.5, "name": "bmk_a"}]}`, wantErr: `artifact 0: field "id": number 1.5 where an integer is expected`},
		{name: "name is a number", input: `[{"id": 1, "name": 5}]`, wantErr: `artifact 0: field "name": number where a string is expected`},
		{name: "expired is a string", input: `[{"id": 1, "name": "bmk_a", "expired": "no"}]`, wantErr: `artifact 0: field "expired": string where true or false is expected`},
		{name: "digest is a number", input: `[{"id": 1, "name": "bmk_a", "digest": 5}]`, wantErr: `artifact 0: field "digest": number where a string is expected`},
		{name: "total_count is a string", input: `{"total_count": "2", "artifacts": []}`, wantErr: `listing object: field "total_count": string where an integer is expected`},
		{name: "run id is a string", input: `{"artifacts": [], "run": {"id": "17"}}`, wantErr: `listing object: field "run.id": string where an integer is expected`},
		{name: "run attempt out of range", input: `{"artifacts": [], "run": {"id": 17, "run_attempt": 40000}}`, wantErr: "run: run_attempt 40000 is out of range"},
		{name: "bad run time", input: `{"artifacts": [], "run": {"created_at": "soon"}}`, wantErr: "run: created_at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := parseListing(strings.NewReader(tt.input), !tt.manifest)
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
		setup       func(t *testing.T, dir string)
		wantListing bool
		wantName    string
		wantID      int64  // listing entry matched to bmk_a; 0 for none
		wantErr     string // ListingErr
	}{
		{name: "no listing"},
		{name: "artifacts.json", files: map[string]string{ListingFile: artifactsJSON}, wantListing: true, wantName: ListingFile, wantID: 1},
		{name: "manifest alone", files: map[string]string{ManifestFile: manifestJSON}, wantListing: true, wantName: ManifestFile, wantID: 2},
		{name: "artifacts.json wins over manifest", files: map[string]string{ListingFile: artifactsJSON, ManifestFile: manifestJSON}, wantListing: true, wantName: ListingFile, wantID: 1},
		{
			name:     "truncated artifacts.json",
			files:    map[string]string{ListingFile: `{"artifacts": [`},
			wantName: ListingFile,
			wantErr:  "artifacts.json: invalid JSON: unexpected EOF",
		},
		{
			name:     "wrong-typed artifacts.json",
			files:    map[string]string{ListingFile: `{"artifacts": [{"id": "1", "name": "bmk_a"}]}`},
			wantName: ListingFile,
			wantErr:  `artifacts.json: artifact 0: field "id": string where an integer is expected`,
		},
		{
			name:     "malformed artifacts.json does not fall back to the manifest",
			files:    map[string]string{ListingFile: `[{"name": "bmk_a"}]`, ManifestFile: manifestJSON},
			wantName: ListingFile,
			wantErr:  "artifacts.json: artifact 0: bmk_a: no id",
		},
		{
			name:     "malformed manifest",
			files:    map[string]string{ManifestFile: `42`},
			wantName: ManifestFile,
			wantErr:  "ingest-artifact-manifest.json: top-level value is neither an object nor an array",
		},
		{
			name: "artifacts.json is a symbolic link",
			setup: func(t *testing.T, dir string) {
				outside := filepath.Join(t.TempDir(), "listing.json")
				writeFile(t, outside, artifactsJSON)
				require.NoError(t, os.Symlink(outside, filepath.Join(dir, ListingFile)))
			},
			wantName: ListingFile,
			wantErr:  "artifacts.json: not a regular file: symbolic link",
		},
		{
			name: "artifacts.json is a folder, beside a good manifest",
			setup: func(t *testing.T, dir string) {
				require.NoError(t, os.Mkdir(filepath.Join(dir, ListingFile), 0o755))
				writeFile(t, filepath.Join(dir, ManifestFile), manifestJSON)
			},
			wantName: ListingFile,
			wantErr:  "artifacts.json: not a regular file: directory",
		},
		{
			name: "artifacts.json is a named pipe",
			setup: func(t *testing.T, dir string) {
				require.NoError(t, syscall.Mkfifo(filepath.Join(dir, ListingFile), 0o644))
			},
			wantName: ListingFile,
			wantErr:  "artifacts.json: not a regular file: named pipe",
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
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			tree := openTree(t, dir)
			require.Equal(t, tt.wantListing, tree.HasListing)
			require.Equal(t, tt.wantName, tree.ListingName)
			require.Empty(t, tree.Problems, "a listing's trouble is ListingErr, not a problem")
			a := tree.Artifact("bmk_a")
			if tt.wantID == 0 {
				require.Nil(t, a.Listing)
			} else {
				require.NotNil(t, a.Listing)
				require.Equal(t, tt.wantID, a.Listing.ID)
			}
			if tt.wantErr == "" {
				require.NoError(t, tree.ListingErr)
			} else {
				require.EqualError(t, tree.ListingErr, tt.wantErr)
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
