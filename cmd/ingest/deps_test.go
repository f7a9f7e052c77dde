package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The binary links none of the packages the Parquet export used to drag
// in (arrow/flight, gRPC, protobuf, arrow/compute): they took it from 29 to
// 70 MB.
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
		for _, banned := range []string{"/arrow/flight", "google.golang.org/grpc", "google.golang.org/protobuf", "github.com/golang/protobuf", "/arrow/compute"} {
			if strings.Contains(p, banned) {
				t.Errorf("cmd/ingest depends on %s (%s)", p, banned)
			}
		}
	}
}
