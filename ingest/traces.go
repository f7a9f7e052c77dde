package ingest

import "context"

// TraceWriter is what the traces stage needs from the run's transaction.
type TraceWriter interface{}

// ingestTraces is the traces stage (issue 4): not built yet, it reads nothing.
func ingestTraces(ctx context.Context, w RunWriter, env *runEnv) error { return nil }
