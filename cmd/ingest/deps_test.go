package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The binary links none of the packages pqarrow's writer drags in
// (arrow/flight, gRPC, protobuf): they took it from 29 to 70 MB. The
// Parquet writer the export uses (parquet/file) needs arrow/compute, which
// TestReleaseBuild's size limit accounts for.
func TestNoHeavyDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v: %s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps listed %d packages, expected the whole graph", len(deps))
	}
	for _, p := range deps {
		for _, banned := range []string{"/arrow/flight", "google.golang.org/grpc", "google.golang.org/protobuf", "github.com/golang/protobuf"} {
			if strings.Contains(p, banned) {
				t.Errorf("cmd/ingest depends on %s (%s)", p, banned)
			}
		}
	}
}
