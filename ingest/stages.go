package ingest

import (
	"context"

	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/stages/evals"
	"github.com/inferencex/ingest/ingest/stages/telemetry"
	"github.com/inferencex/ingest/ingest/stages/traces"
)

// laterStage is one stage that runs after the benchmark rows are applied.
type laterStage struct {
	name string
	run  func(ctx context.Context, w RunWriter, env *runstate.Env) error
}

// laterStages are run in this order: evals resolve configs the benchmark
// rows created; traces and telemetry attach to benchmark rows; the
// changelog comes last because it describes what the run wrote.
func laterStages() []laterStage {
	return []laterStage{
		{"evals", func(ctx context.Context, w RunWriter, env *runstate.Env) error { return evals.Run(ctx, w, env) }},
		{"traces", func(ctx context.Context, w RunWriter, env *runstate.Env) error { return traces.Run(ctx, w, env) }},
		{"telemetry", func(ctx context.Context, w RunWriter, env *runstate.Env) error { return telemetry.Run(ctx, w, env) }},
		{"changelog", ingestChangelog},
	}
}
