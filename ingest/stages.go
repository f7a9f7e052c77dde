package ingest

import (
	"context"

	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/stages/changelog"
	"github.com/inferencex/ingest/ingest/stages/evals"
	"github.com/inferencex/ingest/ingest/stages/telemetry"
	"github.com/inferencex/ingest/ingest/stages/traces"
	"github.com/inferencex/ingest/schema"
)

// laterStage is one stage that runs after the benchmark rows are applied,
// writing through the run's transaction. It returns what it counted,
// which the pipeline adds to the summary.
type laterStage struct {
	name string
	run  func(ctx context.Context, env *runstate.Env) (schema.Counters, error)
}

// laterStages are run in this order: evals resolve configs the benchmark
// rows created; traces and telemetry attach to benchmark rows; the
// changelog comes last because it describes what the run wrote. Each
// stage package declares the Writer it needs; w is all of them. The eval
// rows were read while the benchmark rows were applied (ev).
func laterStages(w RunWriter, ev *evals.Rows) []laterStage {
	return []laterStage{
		{"evals", func(ctx context.Context, _ *runstate.Env) (schema.Counters, error) { return ev.Write(ctx, w) }},
		{"traces", func(ctx context.Context, env *runstate.Env) (schema.Counters, error) { return traces.Run(ctx, w, env) }},
		{"telemetry", func(ctx context.Context, env *runstate.Env) (schema.Counters, error) {
			return telemetry.Run(ctx, w, env)
		}},
		{"changelog", func(ctx context.Context, env *runstate.Env) (schema.Counters, error) {
			return changelog.Run(ctx, w, env)
		}},
	}
}
