package ingest

import (
	"fmt"

	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/schema"
)

// maxOverrideNotes bounds the notes naming what the ledger did to stored
// data.
const maxOverrideNotes = 10

// runOverrides is the ledger's plan for one source run.
func (d Deps) runOverrides(runID int64) schema.OverridePlan {
	var keys []string
	if d.Catalog != nil {
		keys = d.Catalog.GPUPowerKeys()
	}
	return d.Overrides.Plan(keys).ForRun(runID)
}

// noteOverrides counts and names what applying the run's ledger entries
// changed in data earlier ingests stored.
func noteOverrides(t *runstate.Tally, sum *schema.Summary, res schema.OverrideResult) {
	deleted := res.WorkflowRunsDeleted + res.BenchmarkRowsDeleted + res.ServerLogsDeleted + res.TraceSidecarsDeleted +
		res.GPUMetricSeriesDeleted + res.AvailabilityDeleted + res.RunStatsDeleted + res.EvalRowsDeleted + res.ChangelogDeleted +
		res.RunDatasetsDeleted
	sum.Details.OverrideRowsDeleted += deleted
	sum.Details.OverrideRowsRewritten += res.GPUPowerRowsRewritten + res.ConclusionsUpdated + res.PointBackfillRowsRewritten +
		res.ChangelogRowsRewritten + res.TelemetryPowerSeriesRewritten
	for i, a := range res.Actions {
		if i == maxOverrideNotes {
			t.WriteNote(fmt.Sprintf("… and %d more run-override entries applied to stored data", len(res.Actions)-maxOverrideNotes))
			break
		}
		t.WriteNote(OverrideActionLine(a))
	}
}

// OverrideActionLine says what one ledger entry did to stored data.
func OverrideActionLine(a schema.OverrideAction) string {
	run := fmt.Sprintf("run %d", a.RunID)
	if a.Attempt > 0 {
		run += fmt.Sprintf(" attempt %d", a.Attempt)
	}
	reason := ""
	if a.Reason != "" {
		reason = " (" + a.Reason + ")"
	}
	switch a.Kind {
	case "conclusion":
		return fmt.Sprintf("run overrides: %s conclusion set to %s on %s", run, a.Target, runstate.Plural(int(a.Rows), "stored attempt", "stored attempts"))
	case "purged_run":
		return fmt.Sprintf("run overrides: %s (%s) purged%s: %s deleted", run, a.Target, reason, runstate.Plural(int(a.Rows), "stored row", "stored rows"))
	case "purged_point":
		return fmt.Sprintf("run overrides: %s point %s purged%s: %s deleted", run, a.Target, reason, runstate.Plural(int(a.Rows), "stored benchmark row", "stored benchmark rows"))
	case "point_backfill":
		return fmt.Sprintf("run overrides: %s point backfill %s%s: %s rewritten", run, a.Target, reason, runstate.Plural(int(a.Rows), "stored benchmark row", "stored benchmark rows"))
	case "changelog_backfill":
		return fmt.Sprintf("run overrides: %s changelog backfill %s%s: %s rewritten", run, a.Target, reason, runstate.Plural(int(a.Rows), "stored row", "stored rows"))
	case "retired_telemetry_power":
		return fmt.Sprintf("source policy: %s %s GPU power retired%s: %s rewritten", run, a.Target, reason, runstate.Plural(int(a.Rows), "stored telemetry series", "stored telemetry series"))
	default:
		return fmt.Sprintf("source policy: %s point %s GPU power retired%s: %s rewritten", run, a.Target, reason, runstate.Plural(int(a.Rows), "stored row", "stored rows"))
	}
}

// OverrideNotFoundLine warns of a purge entry naming a run or attempt the
// database has never had (schema.OverrideResult.NotFound).
func OverrideNotFoundLine(a schema.OverrideAction) string {
	what := fmt.Sprintf("run %d", a.RunID)
	if a.Attempt > 0 {
		what += fmt.Sprintf(" attempt %d", a.Attempt)
	} else if a.Kind == "purged_run" {
		what += " (every attempt)"
	}
	if a.Kind == "purged_point" {
		what += " point " + a.Target
	}
	missing := "the database stores no attempt of that run and has no ingest of it"
	if a.Attempt > 0 {
		missing = "the database neither stores that attempt nor has an ingest of it"
	}
	return fmt.Sprintf("run overrides: %s is purged (%s), but %s: check the id", what, a.Reason, missing)
}
