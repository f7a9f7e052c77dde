//go:build unix

package source

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/inferencex/ingest/fixtures/generate"
)

// BenchmarkDigestTree digests a generated 5000-point run tree (5083
// folders, 6505 files, 94 MB; page-cached once written) as Digesting.run
// does, and reports the process's user and system CPU per digest besides
// the wall time. "first" hashes every file; "rerun" is given an index
// holding every file, so only the walk is left. "portable" walks and
// hashes through package os (the only way off Linux), "raw" as the digest
// does on this OS. Set DIGEST_BENCH_DIR to digest another tree.
//
//	go test ./ingest/source/ -run '^$' -bench DigestTree -benchtime 20x -count 5
func BenchmarkDigestTree(b *testing.B) {
	dir := benchTree(b)
	impls := []struct {
		name string
		walk func(dir, rel string, withTimes bool, out *[]digestEntry) error
		hash func(ctx context.Context, root string, entries []digestEntry, known FileIndex) error
	}{
		{"portable", walkTreePortable, hashFilesPortable},
		{"raw", walkTree, hashFiles},
	}
	// Index every file, racy or not, for the rerun.
	_, all, err := benchDigest(dir, nil, time.Now().Add(time.Hour), walkTree, hashFiles)
	if err != nil {
		b.Fatal(err)
	}
	for _, impl := range impls {
		for _, c := range []struct {
			name  string
			index []byte
		}{{"first", nil}, {"rerun", all}} {
			b.Run(impl.name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				before := rusage(b)
				for b.Loop() {
					if _, _, err := benchDigest(dir, c.index, time.Now().Add(-racyWindow), impl.walk, impl.hash); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, before)
			})
		}
	}
}

// benchDigest is Digesting.run's work with the given walk and hashing.
func benchDigest(dir string, index []byte, cutoff time.Time,
	walk func(dir, rel string, withTimes bool, out *[]digestEntry) error,
	hash func(ctx context.Context, root string, entries []digestEntry, known FileIndex) error) (sum, newIndex []byte, err error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	var entries []digestEntry
	if err := walk(root, "", !hasListing(root), &entries); err != nil {
		return nil, nil, err
	}
	if err := hash(context.Background(), root, entries, decodeFileIndex(index)); err != nil {
		return nil, nil, err
	}
	return combine(entries), encodeFileIndex(entries, cutoff.UnixNano()), nil
}

// benchTree is the tree the source benchmarks read: DIGEST_BENCH_DIR, else
// a generated 5000-point run with 500 evals (page-cached once written).
func benchTree(b *testing.B) string {
	if dir := os.Getenv("DIGEST_BENCH_DIR"); dir != "" {
		return dir
	}
	dir := b.TempDir()
	if _, err := generate.Write(dir, generate.Options{Points: 5000, Evals: 500, EvalDocs: 5, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	return dir
}

// reportCPU reports the process's user, system and total CPU per
// operation since before (a rusage taken as the loop began).
func reportCPU(b *testing.B, before syscall.Rusage) {
	after := rusage(b)
	n := float64(b.N) * 1e6
	user := time.Duration(after.Utime.Nano() - before.Utime.Nano())
	sys := time.Duration(after.Stime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(user)/n, "user-ms/op")
	b.ReportMetric(float64(sys)/n, "sys-ms/op")
	b.ReportMetric(float64(user+sys)/n, "cpu-ms/op")
}

func rusage(b *testing.B) syscall.Rusage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru
}
