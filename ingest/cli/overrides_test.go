package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// TestOverridesApply: a run purged in the ledger after it was ingested is
// deleted from the stored data by `ingest overrides apply`, and the
// dashboard's latest_benchmarks goes back to the older run's line; a dry
// run says what it would delete and changes nothing; a second apply
// changes nothing and says so; both applies are in the ledger.
func TestOverridesApply(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	older := writeLineRun(t, lineRun{id: 29000000100, created: "2026-11-01T08:00:00Z", started: "2026-11-01T08:01:00Z", concs: []int{4, 8}})
	newer := writeLineRun(t, lineRun{id: 29000000200, created: "2026-11-02T08:00:00Z", started: "2026-11-02T08:01:00Z", concs: []int{4, 8, 16}})
	loadSummary(t, vars, cli.ExitOK, "load", older)
	loadSummary(t, vars, cli.ExitOK, "load", newer)
	require.Equal(t, rowsOf(29000000200, 4, 8, 16), latestRows(t, db))

	ledger := filepath.Join(t.TempDir(), "overrides.json")
	require.NoError(t, os.WriteFile(ledger, []byte(`{"purgedRuns":[{"runId":29000000200,"reason":"accidental merge"}]}`), 0o644))

	r := run(t, vars, "overrides", "apply", "--overrides", ledger, "--dry-run")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "dry run: nothing was changed; applying would")
	require.Contains(t, r.stdout, "delete: 1 workflow runs, 3 benchmark rows,")
	require.Contains(t, r.stdout, "run overrides: run 29000000200 (every attempt) purged (accidental merge)")
	require.Equal(t, int64(5), count(t, db, "benchmark_results"), "a dry run deletes nothing")
	require.Zero(t, count(t, db, "override_applications"))

	r = run(t, vars, "overrides", "apply", "--overrides", ledger, "--format", "json")
	requireCode(t, cli.ExitOK, r)
	var out struct {
		Changed       bool  `json:"changed"`
		ApplicationID int64 `json:"applicationId"`
		Result        struct {
			WorkflowRunsDeleted  int64 `json:"workflowRunsDeleted"`
			BenchmarkRowsDeleted int64 `json:"benchmarkRowsDeleted"`
			RunStatsDeleted      int64 `json:"runStatsDeleted"`
			ChangelogDeleted     int64 `json:"changelogEntriesDeleted"`
		} `json:"result"`
		LatestBenchmarks struct {
			Status string `json:"status"`
		} `json:"latestBenchmarks"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	require.True(t, out.Changed)
	require.NotZero(t, out.ApplicationID)
	require.EqualValues(t, 1, out.Result.WorkflowRunsDeleted)
	require.EqualValues(t, 3, out.Result.BenchmarkRowsDeleted)
	require.EqualValues(t, 1, out.Result.ChangelogDeleted, "the run's fallback changelog entry")
	require.Equal(t, "refreshed", out.LatestBenchmarks.Status)
	require.Equal(t, rowsOf(29000000100, 4, 8), latestRows(t, db), "the older run's line is served again")
	require.Equal(t, int64(2), count(t, db, "benchmark_results"))

	r = run(t, vars, "overrides", "apply", "--overrides", ledger)
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "the stored data already reflects the run overrides: nothing changed")
	require.Equal(t, int64(2), count(t, db, "override_applications"))

	// An ingest of the purged run writes nothing again.
	loadSummary(t, vars, cli.ExitOK, "load", newer, "--overrides", ledger)
	require.Equal(t, int64(2), count(t, db, "benchmark_results"))

	r = run(t, vars, "overrides", "list")
	requireCode(t, cli.ExitUsage, r)
}

// TestMalformedLedgerRefused: a ledger file that a lenient decoder would
// apply in part (trailing data, a second object, the last of two spellings
// of a key) or read past (an unknown field) is refused by every command
// that reads it, before any write: the error names the file and where, and
// the database is as it was.
func TestMalformedLedgerRefused(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	stored := writeLineRun(t, lineRun{id: 29000000300, created: "2026-11-01T08:00:00Z", started: "2026-11-01T08:01:00Z", concs: []int{4, 8}})
	other := writeLineRun(t, lineRun{id: 29000000400, created: "2026-11-02T08:00:00Z", started: "2026-11-02T08:01:00Z", concs: []int{4}})
	loadSummary(t, vars, cli.ExitOK, "load", stored)
	tables := []string{"workflow_runs", "benchmark_results", "changelog_entries", "ingests", "override_applications"}
	state := func() map[string]int64 {
		m := map[string]int64{}
		for _, tbl := range tables {
			m[tbl] = count(t, db, tbl)
		}
		return m
	}
	before := state()
	purge := `{"runId":29000000300,"reason":"accidental merge"}`
	for _, tt := range []struct {
		name, body, want string
	}{
		{"trailing data", `{"purgedRuns":[` + purge + `]} trailing`, "line 1, column 68: data after the JSON value"},
		{"two objects", "{\"purgedRuns\":[]}\n{\"purgedRuns\":[" + purge + "]}", "line 2, column 1: data after the JSON value"},
		{"duplicate top-level key", `{"purgedRuns":[` + purge + `],"purgedRuns":[]}`, `line 1, column 67: duplicate key "purgedRuns"`},
		{"duplicate nested key", `{"purgedRuns":[{"runId":29000000300,"reason":"a","reason":"b"}]}`, `line 1, column 50: duplicate key "purgedRuns[0].reason"`},
		{"unknown field", `{"purgedRuns":[` + purge + `],"purgedPoint":[]}`, `unknown field "purgedPoint"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ledger := filepath.Join(t.TempDir(), "bad-overrides.json")
			require.NoError(t, os.WriteFile(ledger, []byte(tt.body), 0o644))
			for _, args := range [][]string{
				{"overrides", "apply", "--overrides", ledger},
				{"overrides", "apply", "--overrides", ledger, "--dry-run"},
				{"load", other, "--overrides", ledger},
			} {
				r := run(t, vars, args...)
				requireCode(t, cli.ExitAborted, r)
				require.Contains(t, r.stderr, ledger+": "+tt.want, "%v", args)
				require.Equal(t, before, state(), "%v wrote nothing", args)
			}
		})
	}
}

// TestOverridesApplyWarnsOfPurgesOfUnknownRuns: a purge naming a run, or
// an attempt, that the database neither stores nor has an ingest of (a
// typo in the ledger, most likely) is named in a warning by the text and
// JSON reports of apply and its dry run, rather than hidden in "nothing
// changed"; the recorded application carries it too. A run an earlier
// apply purged is known to the ledger and draws no warning.
func TestOverridesApplyWarnsOfPurgesOfUnknownRuns(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	loadSummary(t, vars, cli.ExitOK, "load", writeLineRun(t, lineRun{id: 29000000500, created: "2026-11-01T08:00:00Z", started: "2026-11-01T08:01:00Z", concs: []int{4}}))
	loadSummary(t, vars, cli.ExitOK, "load", writeLineRun(t, lineRun{id: 29000000600, created: "2026-11-02T08:00:00Z", started: "2026-11-02T08:01:00Z", concs: []int{4}}))
	ledger := filepath.Join(t.TempDir(), "overrides.json")
	require.NoError(t, os.WriteFile(ledger, []byte(`{"purgedRuns":[{"runId":29000000600,"reason":"accidental merge"},{"runId":2900000050,"reason":"typo of a run id"}],
		"purgedRunAttempts":[{"runId":29000000500,"attempts":[1,3],"reason":"bad attempts"}]}`), 0o644))

	for _, args := range [][]string{{"--dry-run"}, nil} {
		r := run(t, vars, append([]string{"overrides", "apply", "--overrides", ledger}, args...)...)
		requireCode(t, cli.ExitOK, r)
		require.Contains(t, r.stdout, "warning: run overrides: run 2900000050 (every attempt) is purged (typo of a run id), but the database stores no attempt of that run and has no ingest of it: check the id", "%v", args)
		require.Contains(t, r.stdout, "warning: run overrides: run 29000000500 attempt 3 is purged (bad attempts), but the database neither stores that attempt nor has an ingest of it: check the id", "%v", args)
		require.NotContains(t, r.stdout, "run 29000000500 attempt 1 is purged", "attempt 1 is stored")
		require.NotContains(t, r.stdout, "run 29000000600 (every attempt) is purged", "run 29000000600 is stored")
		require.Equal(t, 2, strings.Count(r.stdout, ": check the id"), "only the operator's two unknown entries warn, never the shipped ledger's: %s", r.stdout)
	}
	require.Zero(t, count(t, db, "workflow_runs"), "the stored attempt and run were purged")

	// Applied again, the runs purged are in the ledger's ingests; the
	// unknown ones still warn, in the JSON report and the recorded result.
	r := run(t, vars, "overrides", "apply", "--overrides", ledger, "--format", "json")
	requireCode(t, cli.ExitOK, r)
	var out struct {
		Changed bool `json:"changed"`
		Result  struct {
			NotFound []struct {
				Kind    string `json:"kind"`
				RunID   int64  `json:"runId"`
				Attempt int    `json:"attempt"`
			} `json:"notFound"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	require.False(t, out.Changed)
	// The embedded ledger's purges name runs this database never held:
	// they are not warned of, only the operator's entries are checked.
	notFound := out.Result.NotFound
	require.Len(t, notFound, 2, r.stdout)
	require.Equal(t, int64(2900000050), notFound[0].RunID)
	require.Zero(t, notFound[0].Attempt)
	require.Equal(t, int64(29000000500), notFound[1].RunID)
	require.Equal(t, 3, notFound[1].Attempt)
	require.Equal(t, []int64{2900000050, 29000000500}, queryInt64s(t, db,
		`SELECT (e->>'runId')::bigint FROM override_applications a, jsonb_array_elements(a.result->'notFound') e
		WHERE a.id = (SELECT max(id) FROM override_applications) AND (e->>'runId')::bigint IN (2900000050, 29000000500, 29000000600) ORDER BY 1`))
}

// TestIngestOfPurgedRun: `ingest load` of a run the ledger purges says so
// in its headline, with the ledger entry's reason, instead of "Results
// ingested" with zero counts; the ingest ledger records it with the
// status purged (a dry run records nothing). Its first ingest, before
// the purge, stays in the ledger.
func TestIngestOfPurgedRun(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	dir := writeLineRun(t, lineRun{id: 29000000700, created: "2026-11-01T08:00:00Z", started: "2026-11-01T08:01:00Z", concs: []int{4, 8}})
	loadSummary(t, vars, cli.ExitOK, "load", dir)
	ledger := filepath.Join(t.TempDir(), "overrides.json")
	require.NoError(t, os.WriteFile(ledger, []byte(`{"purgedRuns":[{"runId":29000000700,"reason":"accidental merge"}]}`), 0o644))

	r := run(t, vars, "load", dir, "--overrides", ledger, "--dry-run")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "Run 29000000700 attempt 1 is purged by the run overrides (accidental merge): nothing was written (dry run).")
	require.Equal(t, int64(1), count(t, db, "ingests"), "a dry run records nothing")

	r = run(t, vars, "load", dir, "--overrides", ledger)
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "Run 29000000700 attempt 1 is purged by the run overrides (accidental merge): nothing was written.")
	require.Contains(t, r.stdout, "stored rows of earlier ingests were deleted.")
	require.NotContains(t, r.stdout, "Results ingested")
	require.Zero(t, count(t, db, "workflow_runs"))

	sum := loadSummary(t, vars, cli.ExitOK, "load", dir, "--overrides", ledger)
	require.Equal(t, schema.StatusPurged, sum.Status)
	require.Equal(t, "accidental merge", sum.Details.PurgeReason)
	require.NotZero(t, sum.IngestID)
	purged := queryInt64s(t, db, `SELECT id FROM ingests WHERE status = 'purged' AND github_run_id = 29000000700 AND run_attempt = 1 ORDER BY id`)
	require.Len(t, purged, 2, "each real ingest of the purged run has its ledger row")
	require.Equal(t, sum.IngestID, purged[1])
	require.Equal(t, []int64{1}, queryInt64s(t, db, `SELECT count(*) FROM ingests WHERE status = 'succeeded'`), "the first ingest stays")
}

// TestOverridesApplyCoverageGuard: `overrides apply` is under the coverage
// guard of load and backfill. Purging the run that published a curve's
// conc-16 point takes the curve back to the older run's two points: under
// refuse (flag or environment, dry run or not) the apply is rolled back
// with exit 4 and the database is as it was; a curve acknowledged with
// --accept-coverage-loss lets it through; under warn (the default) the
// purge is applied and its output reports the coverage loss.
func TestOverridesApplyCoverageGuard(t *testing.T) {
	p := newPurgeOfConc16(t, 29000000500)
	db, vars, ledger, state := p.db, p.vars, p.ledger, p.state
	before := state()
	published := rowsOf(29000000600, 4, 8, 16)
	require.Equal(t, published, latestRows(t, db))

	// What the purge would do, as JSON: the curve it shrinks and why.
	r := run(t, vars, "overrides", "apply", "--overrides", ledger, "--dry-run", "--format", "json")
	requireCode(t, cli.ExitOK, r)
	var dry struct {
		Impact struct {
			CoverageLossCurves int    `json:"coverageLossCurves"`
			Guard              string `json:"guard"`
			Curves             []struct {
				Key          string   `json:"key"`
				CoverageLoss []string `json:"coverageLoss"`
			} `json:"curves"`
		} `json:"impact"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &dry), r.stdout)
	require.Equal(t, 1, dry.Impact.CoverageLossCurves, r.stdout)
	require.Equal(t, "warn", dry.Impact.Guard)
	require.Len(t, dry.Impact.Curves, 1)
	key := dry.Impact.Curves[0].Key
	require.Contains(t, strings.Join(dry.Impact.Curves[0].CoverageLoss, "; "), "conc 16")
	require.Equal(t, before, state(), "a dry run changes nothing")

	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"flag", nil, []string{"--coverage-guard", "refuse"}},
		{"environment", map[string]string{"INGEST_COVERAGE_GUARD": "refuse"}, nil},
		{"dry run", nil, []string{"--coverage-guard", "refuse", "--dry-run"}},
		{"another curve acknowledged", nil, []string{"--coverage-guard", "refuse", "--accept-coverage-loss", "some/other/curve"}},
	} {
		env := map[string]string{}
		for k, v := range vars {
			env[k] = v
		}
		for k, v := range c.env {
			env[k] = v
		}
		r := run(t, env, append([]string{"overrides", "apply", "--overrides", ledger}, c.args...)...)
		requireCode(t, cli.ExitCoverageRefused, r)
		require.Contains(t, r.stderr, "coverage guard refused", c.name)
		require.Contains(t, r.stderr, key, c.name)
		require.Equal(t, before, state(), "%s: a refused apply writes nothing", c.name)
		require.Equal(t, published, latestRows(t, db), c.name)
	}

	r = run(t, vars, "overrides", "apply", "--overrides", ledger, "--coverage-guard", "refuse", "--accept-coverage-loss", key, "--dry-run")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "(acknowledged)")
	// The ledger's own acknowledgement of the purged run does the same.
	acknowledged := filepath.Join(t.TempDir(), "overrides.json")
	require.NoError(t, os.WriteFile(acknowledged, []byte(`{"purgedRuns":[{"runId":29000000600,"reason":"bad image"}],`+
		`"coverageLossAccepted":[{"runId":29000000600,"curves":["`+key+`"],"reason":"conc 16 was measured with the bad image"}]}`), 0o644))
	r = run(t, vars, "overrides", "apply", "--overrides", acknowledged, "--coverage-guard", "refuse", "--dry-run")
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "(acknowledged)")
	require.Equal(t, before, state())

	r = run(t, vars, "overrides", "apply", "--overrides", ledger)
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "applied the run overrides")
	require.Contains(t, r.stdout, "⚠️ coverage loss: ")
	require.Contains(t, r.stdout, key)
	require.Contains(t, r.stdout, "latest_benchmarks refreshed")
	require.Equal(t, rowsOf(29000000500, 4, 8), latestRows(t, db), "under warn the purge is applied")
}

// TestOverridesApplyCoverageGuardUsage: an unknown guard mode is a usage
// error of overrides apply, found before anything connects.
func TestOverridesApplyCoverageGuardUsage(t *testing.T) {
	t.Parallel()
	r := run(t, map[string]string{"DATABASE_URL": "postgres://127.0.0.1:1/none"}, "overrides", "apply", "--coverage-guard", "block")
	requireCode(t, cli.ExitUsage, r)
	require.Contains(t, r.stderr, `invalid value "block" for --coverage-guard: want warn|refuse`)
}

// TestPurgedRunIngestCoverageGuard: an ingest of a run the ledger purges
// deletes what earlier ingests stored of it, and that is under the
// coverage guard too. Purging the run that published the curve's conc-16
// point is refused under refuse (exit 4, nothing deleted, the abort in
// the ledger as for a refused run) and done under warn, the summary's
// impact naming the loss.
func TestPurgedRunIngestCoverageGuard(t *testing.T) {
	p := newPurgeOfConc16(t, 29000000700)
	db, vars, ledger, state, newer := p.db, p.vars, p.ledger, p.state, p.newer
	before := state()

	r := run(t, vars, "load", newer, "--overrides", ledger, "--coverage-guard", "refuse")
	requireCode(t, cli.ExitCoverageRefused, r)
	require.Contains(t, r.stderr, "coverage guard refused")
	// As for a refused run, the ledger records the abort; nothing else.
	recorded := before["ingests"] + 1
	before["ingests"] = recorded
	require.Equal(t, before, state(), "a refused purge deletes nothing")
	require.Equal(t, rowsOf(29000000800, 4, 8, 16), latestRows(t, db))
	require.Contains(t, queryStrings(t, db, `SELECT status || ': ' || error FROM ingests ORDER BY id DESC LIMIT 1`)[0],
		"aborted: the coverage guard refused the run")

	s := loadSummary(t, vars, cli.ExitOK, "load", newer, "--overrides", ledger)
	require.Equal(t, schema.StatusPurged, s.Status)
	require.NotNil(t, s.Impact, "the purge's impact is reported")
	require.Equal(t, 1, s.Impact.CoverageLossCurves)
	require.Equal(t, schema.CoverageGuardWarn, s.Impact.Guard)
	require.Equal(t, rowsOf(29000000700, 4, 8), latestRows(t, db), "under warn the purge is applied")
}

// purgeOfConc16 is a database where an older run (id base) published a
// curve's conc 4 and 8 and a newer one (base+100) conc 4, 8 and 16, and a
// ledger that purges the newer run: applying it takes conc 16 off the
// curve with nothing in its place.
type purgeOfConc16 struct {
	db, ledger, newer string
	vars              map[string]string
	// state counts the rows of what an apply or an ingest writes.
	state func() map[string]int64
}

func newPurgeOfConc16(t *testing.T, base int64) purgeOfConc16 {
	t.Helper()
	db := pgtest.New(t)
	p := purgeOfConc16{db: db, vars: map[string]string{"DATABASE_URL": db}}
	older := writeLineRun(t, lineRun{id: base, created: "2026-11-01T08:00:00Z", started: "2026-11-01T08:01:00Z", concs: []int{4, 8}})
	p.newer = writeLineRun(t, lineRun{id: base + 100, created: "2026-11-02T08:00:00Z", started: "2026-11-02T08:01:00Z", concs: []int{4, 8, 16}})
	loadSummary(t, p.vars, cli.ExitOK, "load", older)
	loadSummary(t, p.vars, cli.ExitOK, "load", p.newer)
	p.ledger = filepath.Join(t.TempDir(), "overrides.json")
	require.NoError(t, os.WriteFile(p.ledger, fmt.Appendf(nil, `{"purgedRuns":[{"runId":%d,"reason":"bad image"}]}`, base+100), 0o644))
	p.state = func() map[string]int64 {
		m := map[string]int64{}
		for _, tbl := range []string{"workflow_runs", "benchmark_results", "changelog_entries", "ingests", "override_applications", "latest_benchmarks"} {
			m[tbl] = count(t, db, tbl)
		}
		return m
	}
	return p
}
