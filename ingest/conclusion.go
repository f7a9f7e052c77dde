package ingest

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/schema"
)

// noteNoConclusion says, in the report and the log, that the run is stored
// without a conclusion and how to give it one. The dashboard's run list
// and availability read only runs whose conclusion is set: without this
// note the run's rows would be stored and silently missing from the site.
// No conclusion is made up from the tree: whether the run succeeded is
// GitHub's to say (a listing's run metadata, --conclusion, or the run
// overrides), and a run still in progress has none.
func noteNoConclusion(t *runstate.Tally, log *zap.Logger, start schema.RunStart) {
	msg := fmt.Sprintf("run %d attempt %d has no conclusion (none stored, none given by artifacts.json, --conclusion or the run overrides): "+
		"the dashboard leaves out runs without one (its run list and availability read conclusion IS NOT NULL), so none of its rows "+
		"show there; ingest it again with --conclusion (success, failure, …) to show it",
		start.Run.SourceRunID, start.Run.SourceRunAttempt)
	t.Note(msg)
	t.Summary().Details.NoConclusion = true
	log.Warn("run has no conclusion: the dashboard will not show it; set --conclusion",
		zap.Int64("run_id", start.Run.SourceRunID), zap.Int("attempt", start.Run.SourceRunAttempt))
}
