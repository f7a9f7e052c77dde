package cli_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestLoadRunStartedAt: workflow_runs.run_started_at (the tie-breaker
// between runs of one day, the date of the as-of-run view) comes from
// --run-started-at or INGEST_RUN_STARTED_AT, else from the listing's
// run_started_at; without either it stays unknown.
func TestLoadRunStartedAt(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	cases := []struct {
		name   string
		opts   generate.Options
		env    map[string]string
		args   []string
		stored string
	}{
		{"listing", generate.Options{RunID: 930001}, nil, nil, "2026-11-20T08:00:00Z"},
		{"flag over the listing", generate.Options{RunID: 930002}, nil, []string{"--run-started-at", "2026-11-20T09:30:00+01:00"},
			"2026-11-20T08:30:00Z"},
		{"environment", generate.Options{RunID: 930003, NoListing: true}, map[string]string{"INGEST_RUN_STARTED_AT": "2026-11-20T08:10:00Z"},
			[]string{"--run-id", "930003", "--run-date", "2026-11-20T08:00:00Z"}, "2026-11-20T08:10:00Z"},
		{"neither", generate.Options{RunID: 930004, NoListing: true}, nil, []string{"--run-id", "930004", "--run-date", "2026-11-20"}, ""},
	}
	for _, c := range cases {
		c.opts.Points, c.opts.Seed = 2, 1
		dir, _ := genTree(t, c.opts)
		env := map[string]string{"DATABASE_URL": db}
		for k, v := range c.env {
			env[k] = v
		}
		requireCode(t, cli.ExitOK, run(t, env, append([]string{"load", dir}, c.args...)...))
		require.Equal(t, []string{c.stored}, queryStrings(t, db,
			`SELECT coalesce(to_char(run_started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), '') FROM workflow_runs WHERE github_run_id = $1`,
			c.opts.RunID), c.name)
	}
}

// TestLoadRunStartedAtRefused: a --run-started-at that is not an RFC 3339
// time, is before any InferenceX run, or is before the run's --run-date is
// a usage error, found before anything is read or written.
func TestLoadRunStartedAtRefused(t *testing.T) {
	t.Parallel()
	dir, _ := genTree(t, generate.Options{Points: 2, Seed: 1})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--run-started-at", "2026-11-20"}, `invalid value "2026-11-20" for --run-started-at: want an RFC 3339 time`},
		{[]string{"--run-started-at", "soon"}, `invalid value "soon" for --run-started-at: want an RFC 3339 time`},
		{[]string{"--run-started-at", "2023-06-01T00:00:00Z"}, "--run-started-at: 2023-06-01T00:00:00Z is before 2024-01-01"},
		{[]string{"--run-date", "2026-11-20T08:00:00Z", "--run-started-at", "2026-11-20T07:59:00Z"},
			"--run-started-at: 2026-11-20T07:59:00Z is before the run's creation (2026-11-20T08:00:00Z, --run-date)"},
	} {
		r := run(t, map[string]string{"DATABASE_URL": "postgres://127.0.0.1:1/none"}, append([]string{"load", dir}, c.args...)...)
		requireCode(t, cli.ExitUsage, r)
		require.Contains(t, r.stderr, c.want)
	}
}
