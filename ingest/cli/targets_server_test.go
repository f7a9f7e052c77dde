package cli_test

import (
	"net/url"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// otherSpelling is dbURL reaching the same database by another host name
// (localhost for 127.0.0.1, and the reverse), with a password the server
// (trust) ignores and no message may show.
func otherSpelling(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	host := "localhost"
	if u.Hostname() == "localhost" {
		host = "127.0.0.1"
	}
	u.Host = host + ":" + u.Port()
	u.User = url.UserPassword(u.User.Username(), "hunter2-secret")
	return u.String()
}

// TestTargetOnProductionsServerIsRefused: a staging URL that reaches the
// production database under another spelling (localhost for 127.0.0.1)
// is the production database, whatever its text: every command that
// writes refuses it as a usage error before writing anything (no rows,
// no ledger row, no migration), naming both targets, where their URLs
// came from and the server and database they reach, never the password.
func TestTargetOnProductionsServerIsRefused(t *testing.T) {
	t.Parallel()
	prod := pgtest.New(t)
	alias := otherSpelling(t, prod)
	dir, _ := genTree(t, generate.Options{Points: 2, Seed: 1, RunID: 28400003801})
	env := map[string]string{"DATABASE_URL": prod, "DATABASE_WRITE_URL_STAGING": alias, "INGEST_REPO": runTestRepo}
	flagEnv := map[string]string{"DATABASE_URL": prod, "INGEST_REPO": runTestRepo}
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		from string
	}{
		{"load", env, []string{"load", dir, "--target", "staging"}, "DATABASE_WRITE_URL_STAGING"},
		{"load --database-url", flagEnv, []string{"load", dir, "--target", "staging", "--database-url", alias}, "--database-url"},
		{"load --dry-run", env, []string{"load", dir, "--target", "staging", "--dry-run"}, "DATABASE_WRITE_URL_STAGING"},
		{"backfill", env, []string{"backfill", "--target", "staging", "--from-dir", filepath.Dir(dir)}, "DATABASE_WRITE_URL_STAGING"},
		{"overrides apply", env, []string{"overrides", "apply", "--target", "staging"}, "DATABASE_WRITE_URL_STAGING"},
		{"migrate up", env, []string{"migrate", "up", "--target", "staging"}, "DATABASE_WRITE_URL_STAGING"},
		{"refresh", env, []string{"refresh", "--target", "staging"}, "DATABASE_WRITE_URL_STAGING"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.vars, tc.args...)
			requireCode(t, cli.ExitUsage, r)
			require.Contains(t, r.stderr, "target staging (URL from "+tc.from+")")
			require.Contains(t, r.stderr, "production (URL from")
			require.Contains(t, r.stderr, "are one database")
			require.Contains(t, r.stderr, "database "+dbName(t, prod))
			require.NotContains(t, r.stderr, "hunter2-secret")
		})
	}
	require.Zero(t, count(t, prod, "ingests"), "a refused staging command wrote a ledger row into production")
	require.Zero(t, count(t, prod, "benchmark_results"))

	// Another database of the same server is another target.
	other := pgtest.New(t)
	r := run(t, map[string]string{"DATABASE_URL": prod, "DATABASE_WRITE_URL_STAGING": otherSpelling(t, other), "INGEST_REPO": runTestRepo},
		"load", dir, "--target", "staging")
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, []string{"staging"}, ledgerTargets(t, other))
	require.Zero(t, count(t, prod, "ingests"))
}

// TestPromotionRefusesAStagingThatIsProduction: the staged-ingest lookup
// of a promotion reads another database than production, proven by what
// the servers say: a staging target reaching the production database by
// another spelling is not compared with (refused under --require-staged,
// "not compared" without), and a staged ingest whose ledger row records
// production's server and database — staged into production, then found
// in another database — is not taken as staged either.
func TestPromotionRefusesAStagingThatIsProduction(t *testing.T) {
	t.Parallel()
	prod := pgtest.New(t)
	alias := otherSpelling(t, prod)
	tree, _ := genTree(t, generate.Options{Points: 2, Seed: 3, RunID: 28400003811})

	// Staged while production pointed elsewhere (a database this server
	// does not have): the staged ingest lands in prod's database, its
	// ledger row recording that database's server.
	nowhere := withDatabase(t, prod, "no_such_production_db")
	s := run(t, map[string]string{"DATABASE_URL": nowhere, "DATABASE_WRITE_URL_STAGING": alias, "INGEST_REPO": runTestRepo},
		"load", tree, "--target", "staging", "--format", "json")
	requireCode(t, cli.ExitOK, s)
	staged := parseSummary(t, s.stdout).Publication
	require.Equal(t, schema.PublicationStaged, staged.Kind)
	require.NotNil(t, staged.Server, "a staged ingest records the server it was written to")
	require.Equal(t, dbName(t, prod), staged.Server.Database)

	vars := map[string]string{"DATABASE_URL": prod, "DATABASE_WRITE_URL_STAGING": alias, "INGEST_REPO": runTestRepo}
	r := run(t, vars, "load", copyTree(t, tree), "--require-staged")
	requireCode(t, cli.ExitAborted, r)
	require.Contains(t, r.stderr, "--require-staged: the staging target (URL from DATABASE_WRITE_URL_STAGING) is the production database")
	require.NotContains(t, r.stderr, "same inputs")
	require.NotContains(t, r.stderr, "hunter2-secret")
	require.Equal(t, []string{"staging", "production"}, ledgerTargets(t, prod))
	require.Equal(t, []string{"succeeded", "aborted"}, queryStrings(t, prod, "SELECT status FROM ingests ORDER BY id"))

	p := run(t, vars, "load", copyTree(t, tree), "--format", "json")
	requireCode(t, cli.ExitOK, p)
	pub := parseSummary(t, p.stdout).Publication
	require.False(t, pub.SameInputs)
	require.Zero(t, pub.StagedIngestID)
	require.Contains(t, pub.NotCompared, "is the production database")

	// A staging database of its own whose staged row records
	// production's server and database (a row staged into production,
	// copied over): not a staged ingest a promotion may rely on.
	staging := pgtest.New(t)
	other, _ := genTree(t, generate.Options{Points: 2, Seed: 4, RunID: 28400003812})
	svars := map[string]string{"DATABASE_URL": prod, "DATABASE_WRITE_URL_STAGING": staging, "INGEST_REPO": runTestRepo}
	requireCode(t, cli.ExitOK, run(t, svars, "load", other, "--target", "staging"))
	prodServer := queryStrings(t, prod, "SELECT summary->'publication'->>'server' FROM ingests WHERE target = 'staging'")
	require.Len(t, prodServer, 1)
	queryStrings(t, staging, `UPDATE ingests SET summary = jsonb_set(summary::jsonb, '{publication,server}', $1::jsonb)::json
		WHERE target = 'staging' RETURNING ''`, prodServer[0])
	r = run(t, svars, "load", copyTree(t, other), "--require-staged")
	requireCode(t, cli.ExitAborted, r)
	require.Contains(t, r.stderr, "--require-staged: staged ingest #1 (staging) was written to the production database")
}
