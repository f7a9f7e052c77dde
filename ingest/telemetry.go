package ingest

import "context"

// TelemetryWriter is what the telemetry stage needs from the run's transaction.
type TelemetryWriter interface{}

// ingestTelemetry is the telemetry stage (issue 5): not built yet, it reads nothing.
func ingestTelemetry(ctx context.Context, w RunWriter, env *runEnv) error { return nil }
