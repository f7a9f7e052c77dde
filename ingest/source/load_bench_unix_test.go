//go:build unix

package source

import (
	"context"
	"io"
	"testing"
)

// BenchmarkReadTree opens the bench tree (benchTree), walks it as the
// tree's digest does, and reads every file of every artifact through its
// FS, as the stages do, reporting the process's CPU per pass. "watched":
// the digest watches the tree, so its folders take their listing from the
// walk and are served through the tree's root; "plain": every folder lists
// and opens itself.
//
//	go test ./ingest/source/ -run '^$' -bench ReadTree -benchtime 10x -count 5
func BenchmarkReadTree(b *testing.B) {
	dir := benchTree(b)
	for _, watched := range []bool{true, false} {
		name := "plain"
		if watched {
			name = "watched"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 64<<10)
			before := rusage(b)
			for b.Loop() {
				if err := readTree(dir, watched, buf); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, before)
		})
	}
}

// readTree reads every file of the tree at dir once, its digest walking it
// meanwhile.
func readTree(dir string, watched bool, buf []byte) error {
	ctx := context.Background()
	d := StartDigest(ctx, dir)
	defer d.Stop()
	tree, err := Open(ctx, dir, nil)
	if err != nil {
		return err
	}
	defer tree.Close()
	if watched {
		d.Watch(tree)
	}
	<-d.listing.done // the walk, which an ingest does either way
	for _, a := range tree.Artifacts {
		fsys, err := a.FS()
		if err != nil {
			return err
		}
		for _, file := range a.Files {
			f, err := fsys.Open(file)
			if err != nil {
				return err
			}
			_, err = io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, buf)
			f.Close()
			if err != nil {
				return err
			}
		}
		if err := a.Release(); err != nil {
			return err
		}
	}
	return nil
}
