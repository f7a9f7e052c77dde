package ingest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/inferencex/ingest/schema"
)

// publish asks the caller for the run's publication section (Config.Publish)
// once the tree's digest and the artifact records are final, just before
// the commit.
func publish(ctx context.Context, cfg Config, inputs *inputDigest, records json.RawMessage, sum *schema.Summary) error {
	if cfg.Publish == nil {
		return nil
	}
	var tree, index []byte
	if inputs != nil {
		tree, index = inputs.treeSum, inputs.treeIndex
	}
	pub, err := cfg.Publish(ctx, sum.Run, tree, index, records)
	if err != nil {
		return fmt.Errorf("publication: %w", err)
	}
	sum.Publication = pub
	return nil
}
