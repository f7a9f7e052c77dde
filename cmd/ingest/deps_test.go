package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// The binary links no bench or test tooling: the bench command's packages,
// the fake GitHub, the test database helpers, net/http/httptest (package
// testing itself comes in with thrift, under the Parquet writer). Its own
// packages declare none of the hooks the bench once needed in shipped code
// (the bench reads stage times from the "stage finished" log line and
// keeps its database helpers and CPU profile to itself).
func TestNoBenchToolingInBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{.Dir}} {{join .GoFiles \" \"}}{{end}}{{if .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v: %s", err, out)
	}
	const module = "github.com/inferencex/ingest/"
	banned := []string{module + "cmd/ingest-bench/", module + "ingest/internal/fakegithub", module + "ingest/store/pgtest", module + "ingest/perf",
		"net/http/httptest"}
	hooks := regexp.MustCompile(`\bStageDone\b|\bFastToast\b|\bCreateDatabase(From)?\b|\bDropDatabase\b|\) Pool\(\)|INGEST_CPU_PROFILE`)
	ours := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, b := range banned {
			if f[0] == b || strings.HasPrefix(f[0], b) && strings.HasSuffix(b, "/") {
				t.Errorf("cmd/ingest depends on %s", f[0])
			}
		}
		if !strings.HasPrefix(f[0], module) || len(f) < 3 {
			continue
		}
		ours++
		for _, name := range f[2:] {
			src, err := os.ReadFile(filepath.Join(f[1], name))
			if err != nil {
				t.Fatal(err)
			}
			if m := hooks.Find(src); m != nil {
				t.Errorf("%s/%s names %q, a bench hook in shipped code", f[0], name, m)
			}
		}
	}
	if ours < 20 {
		t.Fatalf("go list -deps listed %d packages of ours, expected the whole graph", ours)
	}
}
