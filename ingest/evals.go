package ingest

import "context"

// EvalWriter is what the evals stage needs from the run's transaction.
type EvalWriter interface{}

// ingestEvals is the evals stage (issue 3): not built yet, it reads nothing.
func ingestEvals(ctx context.Context, w RunWriter, env *runEnv) error { return nil }
