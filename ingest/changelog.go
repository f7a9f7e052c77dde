package ingest

import "context"

// ChangelogWriter is what the changelog stage needs from the run's transaction.
type ChangelogWriter interface{}

// ingestChangelog is the changelog stage (issue 3): not built yet, it reads nothing.
func ingestChangelog(ctx context.Context, w RunWriter, env *runEnv) error { return nil }
