package cli

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/source"
)

// openingTree is a run tree being opened — and, when the ingest records
// its inputs, its digest walked — while the store is opened: the two wait
// on different things (the disk, the database), so neither waits for the
// other.
type openingTree struct {
	dir    string
	digest *source.Digesting
	done   chan struct{}
	tree   *source.Tree
	err    error
	took   time.Duration
}

// openTree starts opening the tree at dir, and its digest when withDigest.
func openTree(ctx context.Context, dir string, withDigest bool, log *zap.Logger) *openingTree {
	o := &openingTree{dir: dir, done: make(chan struct{})}
	started := time.Now()
	if withDigest {
		o.digest = source.StartDigest(ctx, dir) // hashed while the tree is opened and read
	}
	go func() {
		defer close(o.done)
		o.tree, o.err = source.Open(ctx, dir, log)
		o.took = time.Since(started)
	}()
	return o
}

// wait returns the opened tree.
func (o *openingTree) wait() (*source.Tree, error) {
	<-o.done
	return o.tree, o.err
}

// discard closes what was opened, for an ingest that never started.
func (o *openingTree) discard() {
	if o.digest != nil {
		o.digest.Stop()
	}
	if t, err := o.wait(); err == nil {
		t.Close()
	}
}
