package ingest

import (
	"context"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// runEnv is what the stages after the benchmark rows see: the run as it was
// written, its plan and the tally they report to. They all write inside the
// run's one transaction, so a failure in any of them rolls everything back.
type runEnv struct {
	cfg     Config
	deps    Deps
	start   schema.RunStart
	written schema.WrittenRun
	tree    *source.Tree
	plan    plan
	tally   *tally
	sum     *schema.Summary
	log     *zap.Logger
	// records are the ledger's artifact records; stages append theirs.
	records *[]*artifactRecord
	// agentx is what the benchmark stage noted of the AgentX rows.
	agentx agentxRows
	// changelog is the run's changelog, read before the benchmark stage.
	changelog *runChangelog
}

// laterStage is one stage that runs after the benchmark rows are applied.
type laterStage struct {
	name string
	run  func(ctx context.Context, w RunWriter, env *runEnv) error
}

// laterStages are run in this order: evals resolve configs the benchmark
// rows created; traces and telemetry attach to benchmark rows; the
// changelog comes last because it describes what the run wrote.
func laterStages() []laterStage {
	return []laterStage{
		{"evals", ingestEvals},
		{"traces", ingestTraces},
		{"telemetry", ingestTelemetry},
		{"changelog", ingestChangelog},
	}
}
