package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxReadmeLines bounds the README to what a user needs to start; the
// rest lives under docs/.
const maxReadmeLines = 350

// TestReadme: the README stays short, and the Go it asks for is the one
// go.mod's go line requires (a README naming an older Go sends a user to
// a toolchain that cannot build the module).
func TestReadme(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, over %d: move detail to docs/", n, maxReadmeLines)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+(?:\.\d+)?)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	want := "Go " + string(m[1]) + " or newer"
	if !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not say %q (go.mod: go %s)", want, m[1])
	}
	for _, v := range regexp.MustCompile(`\bGo (1\.\d+(?:\.\d+)?)\b`).FindAllStringSubmatch(string(readme), -1) {
		if v[1] != string(m[1]) {
			t.Errorf("README.md names Go %s; go.mod requires %s", v[1], m[1])
		}
	}
}
