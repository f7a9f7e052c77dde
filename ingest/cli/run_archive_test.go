package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/archive/archivetest"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

const demoRun = 28485856738

// demoMirror writes an archive mirror of the demo run's artifacts whose
// names pass keep, with the bytes GitHub served (the copier's copy).
func demoMirror(t *testing.T, fake *fakegithub.Server, keep func(string) bool) (string, int) {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "2026-01-05", fmt.Sprintf("Full_Sweep_%d", demoRun), "artifacts")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	n := 0
	for _, a := range fake.Artifacts(demoRun) {
		if keep(a.Name) {
			n++
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s_%d.zip", a.Name, a.ID)), a.Data, 0o644))
		}
	}
	return root, n
}

// TestRunArchiveSources: with every benchmark artifact expired on GitHub,
// `ingest run` with an archive writes what a run with none expired writes
// (auto takes the expired ones from the archive, the rest from GitHub, and
// the report says so); `--source archive` without a token ingests the same
// rows from the archive alone and says which run facts it inferred.
func TestRunArchiveSources(t *testing.T) {
	t.Parallel()
	fake, demoDir := demoFake(t)
	loaded := pgtest.New(t)
	requireCode(t, cli.ExitCompletedWithFailures, run(t, nil, "load", demoDir, "--database-url", loaded, "--target", "production"))

	bench := func(name string) bool { return strings.HasPrefix(name, "bmk_") || strings.HasPrefix(name, "results_") }
	var expired int
	for _, a := range fake.Artifacts(demoRun) {
		if bench(a.Name) {
			expired++
			fake.SetExpired(demoRun, a.Name, true)
		}
	}
	all := func(string) bool { return true }

	t.Run("auto", func(t *testing.T) {
		t.Parallel()
		mirror, _ := demoMirror(t, fake, bench)
		db := pgtest.New(t)
		vars := runVars(fake, db, t.TempDir())
		vars["INGEST_ARCHIVE"] = mirror
		r := run(t, vars, "run", "--run-id", fmt.Sprint(demoRun), "--format", "json", "--no-comment")
		requireCode(t, cli.ExitCompletedWithFailures, r) // the demo's designed malformed file
		s := parseSummary(t, withoutComment(r.stdout))
		require.Zero(t, s.Details.ExpiredArtifacts)
		require.Contains(t, strings.Join(s.Notes, "\n"), fmt.Sprintf("%d of %d artifacts were read from the archive %s (expired on GitHub), the others from GitHub",
			expired, demoArtifacts(t, demoDir), mirror))
		require.Equal(t, dumpTables(t, loaded), dumpTables(t, db), "auto wrote other rows than the whole run")
	})
	t.Run("github", func(t *testing.T) {
		t.Parallel()
		mirror, _ := demoMirror(t, fake, bench)
		vars := runVars(fake, pgtest.New(t), t.TempDir())
		vars["INGEST_ARCHIVE"] = mirror
		r := run(t, vars, "run", "--run-id", fmt.Sprint(demoRun), "--format", "json", "--no-comment", "--source", "github")
		s := parseSummary(t, withoutComment(r.stdout))
		require.EqualValues(t, expired, s.Details.ExpiredArtifacts, "github ignores the archive")
	})
	t.Run("archive without a token", func(t *testing.T) {
		t.Parallel()
		mirror, _ := demoMirror(t, fake, all)
		db := pgtest.New(t)
		vars := runVars(fake, db, t.TempDir())
		delete(vars, "GITHUB_TOKEN")
		vars["INGEST_ARCHIVE"] = mirror
		r := run(t, vars, "run", "--run-id", fmt.Sprint(demoRun), "--format", "json", "--source", "archive")
		requireCode(t, cli.ExitCompletedWithFailures, r)
		s := parseSummary(t, withoutComment(r.stdout))
		notes := strings.Join(s.Notes, "\n")
		require.Contains(t, notes, "run facts inferred from the archive (no GitHub token)")
		require.Contains(t, notes, "artifacts were read from the archive "+mirror)
		require.NotContains(t, r.stderr, "report posted")
		require.Positive(t, count(t, db, "benchmark_results"))
	})
	t.Run("archive in a bucket", func(t *testing.T) {
		t.Parallel()
		mirror, _ := demoMirror(t, fake, all)
		srv, _ := archivetest.Serve(t, mirror, "backup", "ci")
		db := pgtest.New(t)
		vars := runVars(fake, db, t.TempDir())
		delete(vars, "GITHUB_TOKEN")
		vars["STORAGE_EMULATOR_HOST"] = srv.URL()
		r := run(t, vars, "run", "--run-id", fmt.Sprint(demoRun), "--format", "json", "--source", "archive", "--archive", "gs://backup/ci")
		requireCode(t, cli.ExitCompletedWithFailures, r)
		s := parseSummary(t, withoutComment(r.stdout))
		require.Contains(t, strings.Join(s.Notes, "\n"), "artifacts were read from the archive gs://backup/ci")
		// The run's facts are inferred (no token), the rows are the run's.
		for _, table := range []string{"benchmark_results", "eval_results", "run_stats"} {
			require.Equal(t, count(t, loaded, table), count(t, db, table), table)
		}
	})
	t.Run("archive needs --archive", func(t *testing.T) {
		t.Parallel()
		r := run(t, runVars(fake, pgtest.New(t), t.TempDir()), "run", "--run-id", fmt.Sprint(demoRun), "--source", "archive")
		requireCode(t, cli.ExitUsage, r)
		require.Contains(t, r.stderr, "--source archive needs an archive: --archive none turns it off")
	})
	t.Run("the project's archive by default", func(t *testing.T) {
		t.Parallel()
		// No --archive and no INGEST_ARCHIVE: auto reads the project's
		// bucket, here the fake's bucket of the same name.
		mirror, _ := demoMirror(t, fake, bench)
		srv, _ := archivetest.Serve(t, mirror, "inferencemax-gha-backup", "")
		db := pgtest.New(t)
		vars := runVars(fake, db, t.TempDir())
		vars["INGEST_ARCHIVE"] = "" // unset: the default applies
		vars["STORAGE_EMULATOR_HOST"] = srv.URL()
		r := run(t, vars, "run", "--run-id", fmt.Sprint(demoRun), "--format", "json", "--no-comment")
		requireCode(t, cli.ExitCompletedWithFailures, r)
		s := parseSummary(t, withoutComment(r.stdout))
		require.Zero(t, s.Details.ExpiredArtifacts)
		require.Contains(t, strings.Join(s.Notes, "\n"), fmt.Sprintf("%d of %d artifacts were read from the archive gs://inferencemax-gha-backup (expired on GitHub)",
			expired, demoArtifacts(t, demoDir)))
		require.Equal(t, dumpTables(t, loaded), dumpTables(t, db), "auto with the default archive wrote other rows than the whole run")
	})
	t.Run("the default archive does not make the token optional", func(t *testing.T) {
		t.Parallel()
		vars := runVars(fake, pgtest.New(t), t.TempDir())
		delete(vars, "GITHUB_TOKEN")
		vars["INGEST_ARCHIVE"] = ""
		r := run(t, vars, "run", "--run-id", fmt.Sprint(demoRun))
		requireCode(t, cli.ExitUsage, r)
		require.Contains(t, r.stderr, "token")
	})
}

// withoutComment is stdout without the PR comment body printed after the
// summary (--no-comment, or no token to post with).
func withoutComment(stdout string) string {
	out, _, _ := strings.Cut(stdout, "\n--- PR comment")
	return out
}

// TestRunArchiveLate: with auto, artifacts GitHub listed unexpired but
// then refuses to serve (410 Gone: expired in between; 404: deleted) are
// taken from the archive, the report names each, and the rows are the
// whole run's; an artifact the archive lacks stays reported as expired.
func TestRunArchiveLate(t *testing.T) {
	t.Parallel()
	fake, demoDir := demoFake(t)
	loaded := pgtest.New(t)
	requireCode(t, cli.ExitCompletedWithFailures, run(t, nil, "load", demoDir, "--database-url", loaded, "--target", "production"))

	var bench []string
	for _, a := range fake.Artifacts(demoRun) {
		if strings.HasPrefix(a.Name, "bmk_") || strings.HasPrefix(a.Name, "results_") {
			bench = append(bench, a.Name)
		}
	}
	require.GreaterOrEqual(t, len(bench), 3)
	gone410, gone404, lacking := bench[0], bench[1], bench[2]
	fake.Inject(fakegithub.Fault{Route: fakegithub.RouteDownload, Artifact: gone410, Kind: fakegithub.Status, Status: 410, Message: "Artifact has expired"})
	fake.Inject(fakegithub.Fault{Route: fakegithub.RouteDownload, Artifact: gone404, Kind: fakegithub.Status, Status: 404, Message: "Not Found"})

	t.Run("all in the archive", func(t *testing.T) {
		mirror, _ := demoMirror(t, fake, func(n string) bool { return n != lacking })
		srv, _ := archivetest.Serve(t, mirror, "backup", "")
		db := pgtest.New(t)
		vars := runVars(fake, db, t.TempDir())
		vars["INGEST_ARCHIVE"] = "gs://backup"
		vars["STORAGE_EMULATOR_HOST"] = srv.URL()
		r := run(t, vars, "run", "--run-id", fmt.Sprint(demoRun), "--format", "json", "--no-comment")
		requireCode(t, cli.ExitCompletedWithFailures, r) // the demo's designed malformed file
		s := parseSummary(t, withoutComment(r.stdout))
		notes := strings.Join(s.Notes, "\n")
		require.Zero(t, s.Details.ExpiredArtifacts, notes)
		require.Contains(t, notes, fmt.Sprintf("artifact %s (id %d): expired after the listing (410 Gone): read from the archive gs://backup", gone410, artifactID(t, fake, gone410)))
		require.Contains(t, notes, fmt.Sprintf("artifact %s (id %d): gone after the listing (404 Not Found): read from the archive gs://backup", gone404, artifactID(t, fake, gone404)))
		require.Contains(t, notes, fmt.Sprintf("2 of %d artifacts were read from the archive gs://backup (expired on GitHub), the others from GitHub", demoArtifacts(t, demoDir)))
		require.Equal(t, dumpTables(t, loaded), dumpTables(t, db), "auto wrote other rows than the whole run")
	})
	t.Run("one the archive lacks", func(t *testing.T) {
		fake.Inject(fakegithub.Fault{Route: fakegithub.RouteDownload, Artifact: lacking, Kind: fakegithub.Status, Status: 410, Message: "Artifact has expired"})
		mirror, _ := demoMirror(t, fake, func(n string) bool { return n != lacking })
		db := pgtest.New(t)
		vars := runVars(fake, db, t.TempDir())
		vars["INGEST_ARCHIVE"] = mirror
		r := run(t, vars, "run", "--run-id", fmt.Sprint(demoRun), "--format", "json", "--no-comment")
		s := parseSummary(t, withoutComment(r.stdout))
		require.EqualValues(t, 1, s.Details.ExpiredArtifacts, strings.Join(s.Notes, "\n"))
		require.Contains(t, strings.Join(s.Notes, "\n"), "2 of ")
	})
}

// artifactID is the id of the demo run's artifact named name.
func artifactID(t *testing.T, fake *fakegithub.Server, name string) int64 {
	t.Helper()
	for _, a := range fake.Artifacts(demoRun) {
		if a.Name == name {
			return a.ID
		}
	}
	t.Fatalf("no artifact %s", name)
	return 0
}

// TestArchiveS3Refused: an s3:// archive is a usage error that says why,
// from the flag or the environment, for every command that reads one.
func TestArchiveS3Refused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		from string
	}{
		{"run flag", nil, []string{"run", "--run-id", "1", "--archive", "s3://backup"}, "--archive"},
		{"backfill flag", nil, []string{"backfill", "--repo", "o/r", "--source", "archive", "--archive", "s3://backup/ci"}, "--archive"},
		{"audit flag", nil, []string{"audit", "--repo", "o/r", "--since", "2026-01-01", "--archive", "S3://backup"}, "--archive"},
		{"run environment", map[string]string{"INGEST_ARCHIVE": "s3://backup"}, []string{"run", "--run-id", "1"}, "--archive (from INGEST_ARCHIVE)"},
		{"another scheme", nil, []string{"run", "--run-id", "1", "--archive", "https://example.com/x"}, "https:// is not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			vars := map[string]string{"DATABASE_URL": unreachableURL, "GITHUB_TOKEN": "t"}
			for k, v := range tc.vars {
				vars[k] = v
			}
			r := run(t, vars, tc.args...)
			requireCode(t, cli.ExitUsage, r)
			require.Contains(t, r.stderr, tc.from)
			if tc.name != "another scheme" {
				require.Contains(t, r.stderr, "s3:// is not supported: the archive is read through Google Cloud Storage's JSON API")
			}
		})
	}
}
