package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// TestDatabaseURLPrecedence proves which of --database-url,
// DATABASE_WRITE_URL and DATABASE_URL is used by where the demo's rows land.
func TestDatabaseURLPrecedence(t *testing.T) {
	t.Parallel()
	const (
		flag  = "flag"
		write = "DATABASE_WRITE_URL"
		plain = "DATABASE_URL"
	)
	tests := []struct {
		name string
		set  []string // which of the three sources are given
		want string   // the one whose database gets the rows
	}{
		{"flag beats both variables", []string{flag, write, plain}, flag},
		{"flag beats DATABASE_URL", []string{flag, plain}, flag},
		{"flag beats DATABASE_WRITE_URL", []string{flag, write}, flag},
		{"DATABASE_WRITE_URL beats DATABASE_URL", []string{write, plain}, write},
		{"DATABASE_WRITE_URL alone", []string{write}, write},
		{"DATABASE_URL alone", []string{plain}, plain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dbs := map[string]string{}
			vars := map[string]string{}
			args := []string{"demo", "--format", "json"}
			for _, src := range tt.set {
				dbs[src] = pgtest.New(t)
				if src == flag {
					args = append(args, "--database-url", dbs[src])
				} else {
					vars[src] = dbs[src]
				}
			}
			r := run(t, vars, args...)
			requireCode(t, cli.ExitOK, r)
			require.Equal(t, "production", parseSummary(t, r.stdout).Target)
			for src, db := range dbs {
				want := int64(0)
				if src == tt.want {
					want = 12
				}
				require.Equal(t, want, count(t, db, "benchmark_results"), "rows in the %s database", src)
				require.Equal(t, want/12, count(t, db, "ingests"), "ledger rows in the %s database", src)
			}
		})
	}
}

// TestDatabaseURLResolution covers every level down to the default without
// writing anywhere: with a cancelled context the command fails at its
// first connection, and the error names the database it chose.
func TestDatabaseURLResolution(t *testing.T) {
	t.Parallel()
	const (
		flagURL  = "postgres://postgres@127.0.0.1:1/from_flag?sslmode=disable"
		writeURL = "postgres://postgres@127.0.0.1:1/from_write?sslmode=disable"
		plainURL = "postgres://postgres@127.0.0.1:1/from_plain?sslmode=disable"
	)
	tests := []struct {
		name string
		args []string
		vars map[string]string
		want string
	}{
		{"flag", []string{"--database-url", flagURL}, map[string]string{"DATABASE_WRITE_URL": writeURL, "DATABASE_URL": plainURL},
			"postgres://***@127.0.0.1:1/from_flag:"},
		{"DATABASE_WRITE_URL", nil, map[string]string{"DATABASE_WRITE_URL": writeURL, "DATABASE_URL": plainURL},
			"postgres://***@127.0.0.1:1/from_write:"},
		{"blank DATABASE_WRITE_URL falls through", nil, map[string]string{"DATABASE_WRITE_URL": "  ", "DATABASE_URL": plainURL},
			"postgres://***@127.0.0.1:1/from_plain:"},
		{"DATABASE_URL", nil, map[string]string{"DATABASE_URL": plainURL},
			"postgres://***@127.0.0.1:1/from_plain:"},
		{"default", nil, nil, "postgres://***@127.0.0.1:5432/ingest:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			r := runCtx(ctx, tt.vars, append([]string{"migrate", "version"}, tt.args...)...)
			requireCode(t, cli.ExitAborted, r)
			require.Contains(t, r.stderr, "ingest: connect to "+tt.want)
			require.Empty(t, r.stdout)
		})
	}
	require.Equal(t, "postgres://postgres@127.0.0.1:5432/ingest?sslmode=disable", cli.DefaultDatabaseURL)
}

// TestRunIDPrecedence uses a tree without artifacts.json, which accepts any
// run id, and reads back the run id the ledger recorded.
func TestRunIDPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		vars       map[string]string
		wantCode   int
		wantRunID  int64
		wantStderr string
	}{
		{"flag beats INGEST_RUN_ID", []string{"--run-id", "111"}, map[string]string{"INGEST_RUN_ID": "222"}, cli.ExitOK, 111, ""},
		{"flag beats an invalid INGEST_RUN_ID", []string{"--run-id", "111"}, map[string]string{"INGEST_RUN_ID": "abc"}, cli.ExitOK, 111, ""},
		{"INGEST_RUN_ID", nil, map[string]string{"INGEST_RUN_ID": "222"}, cli.ExitOK, 222, ""},
		{"invalid INGEST_RUN_ID", nil, map[string]string{"INGEST_RUN_ID": "abc"}, cli.ExitUsage, 0,
			`ingest load: invalid value "abc" for --run-id (from INGEST_RUN_ID): want a positive integer`},
		{"no run id anywhere", nil, nil, cli.ExitUsage, 0,
			"has no artifacts.json (nor ingest-artifact-manifest.json) to take the run id from: pass --run-id (or INGEST_RUN_ID)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, m := genTree(t, generate.Options{Points: 2, Seed: 7, NoListing: true})
			db := pgtest.New(t)
			args := append([]string{"load", dir, "--database-url", db}, tt.args...)
			r := run(t, tt.vars, args...)
			requireCode(t, tt.wantCode, r)
			require.Contains(t, r.stderr, tt.wantStderr)
			if tt.wantRunID == 0 {
				require.Zero(t, count(t, db, "benchmark_results"))
				require.Zero(t, count(t, db, "workflow_runs"))
				return
			}
			require.Equal(t, []int64{tt.wantRunID}, queryInt64s(t, db, "SELECT github_run_id FROM ingests"))
			require.Equal(t, []int64{tt.wantRunID}, queryInt64s(t, db, "SELECT github_run_id FROM workflow_runs"))
			require.Equal(t, int64(m.Points), count(t, db, "benchmark_results"))
		})
	}
}

// TestIngestOptionPrecedence checks string options whose value shows in
// the summary, on a dry run of the demo (nothing is written, so the cases
// can share a database).
func TestIngestOptionPrecedence(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	tests := []struct {
		name  string
		args  []string
		vars  map[string]string
		check func(t *testing.T, s schema.Summary)
	}{
		{"target flag beats INGEST_TARGET", []string{"--target", "from-flag"}, map[string]string{"INGEST_TARGET": "from-env"},
			func(t *testing.T, s schema.Summary) { require.Equal(t, "from-flag", s.Target) }},
		{"INGEST_TARGET", nil, map[string]string{"INGEST_TARGET": "from-env"},
			func(t *testing.T, s schema.Summary) { require.Equal(t, "from-env", s.Target) }},
		{"target defaults to production", nil, nil,
			func(t *testing.T, s schema.Summary) { require.Equal(t, "production", s.Target) }},
		{"repo flag beats INGEST_REPO", []string{"--repo", "flag/repo"}, map[string]string{"INGEST_REPO": "env/repo"},
			func(t *testing.T, s schema.Summary) { require.Equal(t, "flag/repo", s.Run.Repo) }},
		{"INGEST_REPO", nil, map[string]string{"INGEST_REPO": "env/repo"},
			func(t *testing.T, s schema.Summary) { require.Equal(t, "env/repo", s.Run.Repo) }},
		{"repo default", nil, nil,
			func(t *testing.T, s schema.Summary) { require.Equal(t, "SemiAnalysisAI/InferenceX", s.Run.Repo) }},
		{"attempt flag beats INGEST_RUN_ATTEMPT", []string{"--attempt", "5"}, map[string]string{"INGEST_RUN_ATTEMPT": "4"},
			func(t *testing.T, s schema.Summary) { require.Equal(t, 5, s.Run.SourceRunAttempt) }},
		{"INGEST_RUN_ATTEMPT", nil, map[string]string{"INGEST_RUN_ATTEMPT": "4"},
			func(t *testing.T, s schema.Summary) { require.Equal(t, 4, s.Run.SourceRunAttempt) }},
		{"attempt from artifacts.json", nil, nil,
			func(t *testing.T, s schema.Summary) { require.Equal(t, 2, s.Run.SourceRunAttempt) }},
		{"GitHub Actions variables link the ingest run", nil,
			map[string]string{"GITHUB_SERVER_URL": "https://github.example", "GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "42"},
			func(t *testing.T, s schema.Summary) {
				require.Equal(t, "https://github.example/o/r/actions/runs/42", s.Links.IngestRun)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"demo", "--database-url", db, "--dry-run", "--format", "json"}, tt.args...)
			r := run(t, tt.vars, args...)
			requireCode(t, cli.ExitOK, r)
			s := parseSummary(t, r.stdout)
			require.True(t, s.DryRun)
			tt.check(t, s)
		})
	}
}

// TestReportFormatPrecedence checks --format against INGEST_REPORT_FORMAT.
func TestReportFormatPrecedence(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	tests := []struct {
		name   string
		args   []string
		vars   map[string]string
		prefix string
	}{
		{"default is text", nil, nil, "Ingest report — "},
		{"INGEST_REPORT_FORMAT", nil, map[string]string{"INGEST_REPORT_FORMAT": "json"}, "{\n"},
		{"flag beats INGEST_REPORT_FORMAT", []string{"--format", "md"}, map[string]string{"INGEST_REPORT_FORMAT": "json"},
			"<!-- ingest-report source-run=28485856738 -->"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, tt.vars, append([]string{"demo", "--database-url", db, "--dry-run"}, tt.args...)...)
			requireCode(t, cli.ExitOK, r)
			require.True(t, strings.HasPrefix(r.stdout, tt.prefix), "report starts with %q:\n%s", tt.prefix, r.stdout)
		})
	}
}

// TestDryRunPrecedence checks the boolean INGEST_DRY_RUN and --dry-run by
// whether the demo's rows reach the database.
func TestDryRunPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		env     string
		wantDry bool
	}{
		{"INGEST_DRY_RUN=true", nil, "true", true},
		{"INGEST_DRY_RUN=TRUE", nil, "TRUE", true},
		{"INGEST_DRY_RUN=1", nil, "1", true},
		{"INGEST_DRY_RUN=yes", nil, "yes", true},
		{"INGEST_DRY_RUN=false", nil, "false", false},
		{"INGEST_DRY_RUN=0", nil, "0", false},
		{"unset", nil, "", false},
		{"flag", []string{"--dry-run"}, "", true},
		{"--dry-run=false beats INGEST_DRY_RUN=true", []string{"--dry-run=false"}, "true", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			vars := map[string]string{"INGEST_DRY_RUN": tt.env}
			r := run(t, vars, append([]string{"demo", "--database-url", db, "--format", "json"}, tt.args...)...)
			requireCode(t, cli.ExitOK, r)
			s := parseSummary(t, r.stdout)
			require.Equal(t, tt.wantDry, s.DryRun)
			require.Equal(t, demoFirst, s.Rows.Benchmark, "a dry run reports the would-be counts")
			want := int64(12)
			if tt.wantDry {
				want = 0
			}
			require.Equal(t, want, count(t, db, "benchmark_results"))
		})
	}
}

// TestUnmappedOutputPrecedence checks --unmapped-output against
// UNMAPPED_ENTITIES_OUTPUT by which file the demo writes.
func TestUnmappedOutputPrecedence(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	tests := []struct {
		name     string
		flag     bool
		env      bool
		wantFile string // "flag", "env" or "" for neither
	}{
		{"flag beats UNMAPPED_ENTITIES_OUTPUT", true, true, "flag"},
		{"UNMAPPED_ENTITIES_OUTPUT", false, true, "env"},
		{"flag", true, false, "flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			paths := map[string]string{
				"flag": filepath.Join(dir, "from-flag.json"),
				"env":  filepath.Join(dir, "from-env.json"),
			}
			args := []string{"demo", "--database-url", db, "--dry-run"}
			vars := map[string]string{}
			if tt.flag {
				args = append(args, "--unmapped-output", paths["flag"])
			}
			if tt.env {
				vars["UNMAPPED_ENTITIES_OUTPUT"] = paths["env"]
			}
			requireCode(t, cli.ExitOK, run(t, vars, args...))
			for src, p := range paths {
				_, err := os.Stat(p)
				if src == tt.wantFile {
					require.NoError(t, err, "%s file", src)
				} else {
					require.ErrorIs(t, err, os.ErrNotExist, "%s file", src)
				}
			}
		})
	}
}

// TestArtifactsPathPrecedence checks the tree argument against --artifacts
// and INGEST_ARTIFACTS_PATH by how many points land.
func TestArtifactsPathPrecedence(t *testing.T) {
	t.Parallel()
	small, ms := genTree(t, generate.Options{Points: 2, Seed: 1})
	large, ml := genTree(t, generate.Options{Points: 5, Seed: 2})
	require.NotEqual(t, ms.Points, ml.Points)
	envLarge := map[string]string{"INGEST_ARTIFACTS_PATH": large}
	tests := []struct {
		name string
		args func(db string) []string
		vars map[string]string
		want int
	}{
		{"argument before the flags beats INGEST_ARTIFACTS_PATH",
			func(db string) []string { return []string{small, "--database-url", db, "--format", "json"} }, envLarge, ms.Points},
		{"argument after the flags beats INGEST_ARTIFACTS_PATH",
			func(db string) []string { return []string{"--database-url", db, "--format", "json", small} }, envLarge, ms.Points},
		{"--artifacts beats INGEST_ARTIFACTS_PATH",
			func(db string) []string {
				return []string{"--artifacts", small, "--database-url", db, "--format", "json"}
			}, envLarge, ms.Points},
		{"INGEST_ARTIFACTS_PATH",
			func(db string) []string { return []string{"--database-url", db, "--format", "json"} }, envLarge, ml.Points},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			r := run(t, tt.vars, append([]string{"load"}, tt.args(db)...)...)
			requireCode(t, cli.ExitOK, r)
			require.Equal(t, int64(tt.want), parseSummary(t, r.stdout).Rows.Benchmark.New)
			require.Equal(t, int64(tt.want), count(t, db, "benchmark_results"))
		})
	}
}
