package ingest

import (
	"context"

	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// refuseListing aborts the ingest of a tree whose listing is unusable
// (source.Tree.ListingErr) before anything is read or written: without it
// no zip's digest would be checked. The abort is recorded in the ledger
// when the run is known without the listing (flags, reuse metadata);
// otherwise the error is the listing's, not "no run id".
func refuseListing(ctx context.Context, cfg Config, tree *source.Tree, sum *schema.Summary, t *runstate.Tally, d Deps) (*schema.Summary, error) {
	cause := tree.ListingErr
	start, err := runStart(cfg, tree, sum.StartedAt, runstate.NewTally(&schema.Summary{}))
	if err != nil {
		return abort(sum, t, d, cause), cause
	}
	sum.Run = start.Run
	sum.Links.SourceRun = start.Meta.HTMLURL
	sum.Links.MergeRun = start.MergeMeta.HTMLURL
	return abortRecorded(ctx, sum, t, d, start, nil, cause)
}
