package ingest_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/archive/archivetest"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/schema"
)

// hostileRunID is the run id of the hand-built trees (given as --run-id).
const hostileRunID = 42

// hSeedRunID is the run already in the database before an aborting case
// runs: its rows must come out of the case exactly as they went in.
const hSeedRunID = 1000

// hLockedBuffer is a writer the command and its logger can share.
type hLockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *hLockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *hLockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// hResult is what one command line did.
type hResult struct {
	code   int
	stdout string
	stderr string
}

func (r hResult) output() string { return r.stdout + "\n" + r.stderr }

func (r hResult) String() string {
	out := fmt.Sprintf("exit %d\n--- stdout ---\n%s\n--- stderr ---\n%s", r.code, r.stdout, r.stderr)
	if len(out) > 8000 {
		out = out[:8000] + "\n… (cut)"
	}
	return out
}

// hCLI runs one ingest command line in-process, as the binary would, with
// exactly the environment vars.
func hCLI(ctx context.Context, vars map[string]string, args ...string) hResult {
	var stdout, stderr hLockedBuffer
	// GitHub requests are tried as often as by default, with a backoff of
	// milliseconds: what the cases check is the attempts and the outcome.
	retry := github.RetryPolicy{BaseDelay: 5 * time.Millisecond, MaxDelay: 20 * time.Millisecond}
	code := cli.Main(ctx, args, cli.Env{Stdout: &stdout, Stderr: &stderr, Retry: retry,
		Getenv: archivetest.Offline(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })})
	return hResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// hTables are every table of the database but golang-migrate's, the
// ledger and the backfill queue (which record attempts, aborted ones
// included).
func hTables(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(t.Context(), `SELECT table_name::text FROM information_schema.tables
		WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
		  AND table_name NOT IN ('ingests', 'backfills', 'backfill_runs', 'ingest_schema_migrations') ORDER BY 1`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return tables
}

// hChecksums is an md5 per table over its rows as text, in order.
func hChecksums(t *testing.T, dbURL string) map[string]string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	tables := hTables(t, conn)
	require.NotEmpty(t, tables)
	out := map[string]string{}
	for _, tbl := range tables {
		var sum string
		q := "SELECT count(*)::text || ':' || coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), 'empty') FROM " +
			pgx.Identifier{tbl}.Sanitize() + " t"
		require.NoError(t, conn.QueryRow(t.Context(), q).Scan(&sum))
		out[tbl] = sum
	}
	return out
}

// hReset empties every table of a migrated database (the migrations'
// own bookkeeping excepted) and restarts its sequences.
func hReset(t *testing.T, dbURL string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	rows, err := conn.Query(t.Context(), `SELECT format('%I', table_name) FROM information_schema.tables
		WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'ingest_schema_migrations'`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NotEmpty(t, tables)
	_, err = conn.Exec(t.Context(), "TRUNCATE "+strings.Join(tables, ", ")+" RESTART IDENTITY CASCADE")
	require.NoError(t, err)
}

// hQueryInt runs a query returning one integer.
func hQueryInt(t *testing.T, dbURL, q string, args ...any) int64 {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	var n int64
	require.NoError(t, conn.QueryRow(t.Context(), q, args...).Scan(&n))
	return n
}

// hQueryStrings runs a query returning one text column.
func hQueryStrings(t *testing.T, dbURL, q string, args ...any) []string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	rows, err := conn.Query(t.Context(), q, args...)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return out
}

// hSeed loads a small run of another id into the database, so an
// aborting case has rows it must not touch.
func hSeed(t *testing.T, dbURL string) {
	t.Helper()
	dir := t.TempDir()
	_, err := generate.Write(dir, generate.Options{Points: 2, Seed: 99, RunID: hSeedRunID})
	require.NoError(t, err)
	r := hCLI(t.Context(), nil, "load", dir, "--database-url", dbURL, "--log-level", "error")
	require.Equal(t, cli.ExitOK, r.code, "seeding the database: %s", r)
}

// hBenchTree writes two good single-node per-job artifacts (conc 4 and 8).
func hBenchTree(t *testing.T, dir string) {
	t.Helper()
	perJob(t, dir, "good4", benchRow(4, nil))
	perJob(t, dir, "good8", benchRow(8, nil))
}

// hGenOptions is the small generated run most cases start from: two
// fixed-seq points with telemetry, two AgentX points (one with its raw
// sibling), one eval with four documents, a changelog and run stats.
var hGenOptions = generate.Options{Points: 3, Seed: 1, Telemetry: true, Evals: 1, EvalDocs: 4, AgentX: 1}

// hGenTree writes the generated base run into dir.
func hGenTree(t *testing.T, dir string) generate.Manifest {
	t.Helper()
	m, err := generate.Write(dir, hGenOptions)
	require.NoError(t, err)
	return m
}

// hGlob is the one path matching pattern under dir (the first by name when
// several do).
func hGlob(t *testing.T, dir, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	require.NoError(t, err)
	require.NotEmpty(t, m, "nothing matches %s under %s", pattern, dir)
	sort.Strings(m)
	return m[0]
}

// hFixedSeqArtifact is the first single-node fixed-seq per-job artifact of
// a generated tree (a folder), and its one JSON file.
func hFixedSeqArtifact(t *testing.T, dir string) (name, file string) {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "bmk_*"))
	require.NoError(t, err)
	sort.Strings(m)
	for _, p := range m {
		b := filepath.Base(p)
		if strings.HasPrefix(b, "bmk_agentic_") || strings.HasSuffix(b, ".zip") {
			continue
		}
		return b, hGlob(t, p, "*.json")
	}
	t.Fatalf("no fixed-seq per-job folder under %s", dir)
	return "", ""
}

// hEditJSON rewrites a JSON object file through edit.
func hEditJSON(t *testing.T, path string, edit func(m map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&m))
	edit(m)
	writeFile(t, path, mustJSON(t, m))
}

// hReplaceOnce replaces the first old in the file with new; old must occur.
func hReplaceOnce(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), old, "%s holds no %q", path, old)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644))
}

// hListing edits artifacts.json as generic JSON.
func hListing(t *testing.T, dir string, edit func(doc map[string]any)) {
	t.Helper()
	hEditJSON(t, filepath.Join(dir, "artifacts.json"), edit)
}

// hListingEntry returns the listing entry of artifact name.
func hListingEntry(doc map[string]any, name string) map[string]any {
	for _, a := range doc["artifacts"].([]any) {
		e := a.(map[string]any)
		if e["name"] == name {
			return e
		}
	}
	return nil
}

// hZipFiles reads every entry of a zip.
func hZipFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	zr, err := zip.OpenReader(path)
	require.NoError(t, err)
	defer zr.Close()
	out := map[string][]byte{}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		out[f.Name] = b
	}
	return out
}

// hWriteZipBytes writes files (sorted by name) as a deflate zip.
func hWriteZipBytes(t *testing.T, path string, files map[string][]byte) {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.Create(n)
		require.NoError(t, err)
		_, err = w.Write(files[n])
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
}

// hSetListingDigest records the zip's true size and sha256 in the listing
// (when the tree has one), as GitHub would for the uploaded bytes.
func hSetListingDigest(t *testing.T, dir, name string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "artifacts.json")); err != nil {
		return
	}
	data, err := os.ReadFile(filepath.Join(dir, name+".zip"))
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	hListing(t, dir, func(doc map[string]any) {
		e := hListingEntry(doc, name)
		require.NotNil(t, e, "%s is not listed", name)
		e["digest"] = "sha256:" + hex.EncodeToString(sum[:])
		e["size_in_bytes"] = len(data)
	})
}

// hEditZip rewrites the zip artifact name (a <name>.zip under dir) through
// edit; with keepDigest false the listing is updated to the new bytes.
func hEditZip(t *testing.T, dir, name string, keepDigest bool, edit func(files map[string][]byte)) {
	t.Helper()
	path := filepath.Join(dir, name+".zip")
	files := hZipFiles(t, path)
	edit(files)
	hWriteZipBytes(t, path, files)
	if !keepDigest {
		hSetListingDigest(t, dir, name)
	}
}

// hFolderToZip turns a folder artifact into <name>.zip holding files
// (relative names) instead, updating the listing's digest.
func hFolderToZip(t *testing.T, dir, name string, edit func(files map[string][]byte)) {
	t.Helper()
	root := filepath.Join(dir, name)
	files := map[string][]byte{}
	require.NoError(t, filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		return err
	}))
	edit(files)
	require.NoError(t, os.RemoveAll(root))
	hWriteZipBytes(t, filepath.Join(dir, name+".zip"), files)
	hSetListingDigest(t, dir, name)
}

// hEditLines rewrites line n (1-based) of a text file.
func hEditLines(t *testing.T, data []byte, n int, edit func(line string) string) []byte {
	t.Helper()
	lines := strings.Split(string(data), "\n")
	require.Greater(t, len(lines), n, "fewer than %d lines", n)
	lines[n-1] = edit(lines[n-1])
	return []byte(strings.Join(lines, "\n"))
}

// hCSVField replaces field i (0-based, comma-separated, trimmed) of a line.
func hCSVField(line string, i int, v string) string {
	f := strings.Split(line, ",")
	f[i] = " " + v
	return strings.Join(f, ",")
}

// hSummary reads the JSON summary the command wrote (nil when it wrote
// none).
func hSummary(t *testing.T, path string) *schema.Summary {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var s schema.Summary
	require.NoError(t, json.Unmarshal(data, &s), "summary %s", path)
	return &s
}

// hFailure reports whether the summary lists a failure of artifact whose
// file and reason contain the given parts.
func hFailure(sum *schema.Summary, artifact, file, reason string) bool {
	if sum == nil {
		return false
	}
	for _, f := range sum.Failures {
		if strings.Contains(f.Artifact, artifact) && strings.Contains(f.File, file) && strings.Contains(f.Reason, reason) {
			return true
		}
	}
	return false
}

// hRequireFailure fails unless the summary lists the failure.
func hRequireFailure(t *testing.T, sum *schema.Summary, artifact, file, reason string) {
	t.Helper()
	require.NotNil(t, sum, "no JSON summary")
	require.True(t, hFailure(sum, artifact, file, reason), "no failure %s / %s: …%s… in %+v", artifact, file, reason, sum.Failures)
}

// hCounts is shorthand for a report row.
func hCounts(newN, dup, skipped, unmapped, failed int64) schema.Counts {
	return schema.Counts{New: newN, Duplicate: dup, Skipped: skipped, Unmapped: unmapped, Failed: failed}
}

// hItoa is strconv.Itoa for int64.
func hItoa(n int64) string { return strconv.FormatInt(n, 10) }

// hDetail reads details.<key> of the JSON summary as a number (fields the
// typed Summary may not carry yet); ok is false when it is absent.
func hDetail(t *testing.T, path, key string) (float64, bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	var doc struct {
		Details map[string]any `json:"details"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	v, ok := doc.Details[key].(float64)
	return v, ok
}

// mustJSONNoT is mustJSON for builders that run without a *testing.T.
func mustJSONNoT(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b)
}

// jsonUnmarshalNumber decodes keeping numbers as json.Number.
func jsonUnmarshalNumber(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}
