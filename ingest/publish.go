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
	var tree []byte
	if inputs != nil {
		tree = inputs.treeSum
	}
	pub, err := cfg.Publish(ctx, sum.Run, tree, records)
	if err != nil {
		return fmt.Errorf("publication: %w", err)
	}
	sum.Publication = pub
	return nil
}
