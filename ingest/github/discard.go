package github

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Discard removes a fetched run from the cache: its run tree and the
// downloaded artifacts it was built from. A backfill calls it after each
// run so that the cache does not grow with the number of runs.
func (c *Client) Discard(res *Result) error {
	if res == nil {
		return nil
	}
	var errs []error
	if res.Dir != "" {
		if err := os.RemoveAll(res.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	for _, a := range res.Selected {
		if err := os.Remove(c.artifactPath(a.ID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("run %d: discard the cached run: %w", res.Source.Meta.RunID, err)
	}
	return nil
}
