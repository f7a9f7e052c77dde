package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferencex/ingest/schema"
)

// BenchmarkReadListing reads a 5000-artifact listing as Open does. Set
// LISTING_BENCH_FILE to measure another listing (e.g. one written by
// `go run ./fixtures/gen -out /tmp/ls-tree -points 5000`).
func BenchmarkReadListing(b *testing.B) {
	path := os.Getenv("LISTING_BENCH_FILE")
	if path == "" {
		path = filepath.Join(b.TempDir(), ListingFile)
		if err := WriteListing(path, benchRun(), benchEntries(5000)); err != nil {
			b.Fatal(err)
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(info.Size())
	b.ReportAllocs()
	for b.Loop() {
		doc, err := readListing(path, ListingFile)
		if err != nil || len(doc.entries) == 0 {
			b.Fatal(err, len(doc.entries))
		}
	}
}

func benchRun() schema.RunMeta {
	return schema.RunMeta{RunID: 28485856738, RunAttempt: 1, Name: "Run Sweep", Event: "push",
		Status: "completed", Conclusion: "success", HeadSHA: strings.Repeat("4f", 20), HeadBranch: "main"}
}

func benchEntries(n int) []schema.ArtifactListing {
	t0 := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	out := make([]schema.ArtifactListing, n)
	for i := range out {
		e := schema.ArtifactListing{
			ID:          4900000000 + int64(i),
			Name:        "bmk_qwen3.5_8k1k_fp8_sglang_tp4-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc4_b200-dgxc_05_recipe-" + strings.Repeat("9b", 8) + "_" + time.Duration(i).String(),
			CreatedAt:   t0.Add(time.Duration(i) * time.Second),
			SizeInBytes: 2000 + int64(i),
		}
		if i%2 == 1 {
			e.Digest = "sha256:" + strings.Repeat("72d2349d", 8)
		}
		out[i] = e
	}
	return out
}
