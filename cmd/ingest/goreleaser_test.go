package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// goreleaserConfig is the part of .goreleaser.yaml the release contract
// rests on.
type goreleaserConfig struct {
	Version int `yaml:"version"`
	Builds  []struct {
		ID      string   `yaml:"id"`
		Main    string   `yaml:"main"`
		Binary  string   `yaml:"binary"`
		Env     []string `yaml:"env"`
		Goos    []string `yaml:"goos"`
		Goarch  []string `yaml:"goarch"`
		Flags   []string `yaml:"flags"`
		Ldflags []string `yaml:"ldflags"`
	} `yaml:"builds"`
	Archives []struct {
		Formats      []string `yaml:"formats"`
		NameTemplate string   `yaml:"name_template"`
		Files        []string `yaml:"files"`
	} `yaml:"archives"`
	Release struct {
		GitHub struct {
			Owner string `yaml:"owner"`
			Name  string `yaml:"name"`
		} `yaml:"github"`
	} `yaml:"release"`
	Sboms []struct {
		Artifacts string `yaml:"artifacts"`
	} `yaml:"sboms"`
	Checksum struct {
		NameTemplate string `yaml:"name_template"`
		Algorithm    string `yaml:"algorithm"`
	} `yaml:"checksum"`
}

// TestGoreleaserConfig checks the release configuration against the same
// contract as scripts/build-static (which the container image uses) and
// the names scripts/fetch-release (the action's download) expects.
func TestGoreleaserConfig(t *testing.T) {
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c goreleaserConfig
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&c); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if c.Version != 2 {
		t.Errorf("version %d, want the GoReleaser v2 format", c.Version)
	}
	if len(c.Builds) != 1 {
		t.Fatalf("want one build, got %d", len(c.Builds))
	}
	b := c.Builds[0]
	if b.Main != "./cmd/ingest" || b.Binary != "ingest" {
		t.Errorf("build main %q binary %q, want ./cmd/ingest and ingest", b.Main, b.Binary)
	}
	if !slices.Contains(b.Env, "CGO_ENABLED=0") {
		t.Errorf("build env %q: the release must be static (CGO_ENABLED=0)", b.Env)
	}
	if !slices.Equal(b.Goos, []string{"linux"}) {
		t.Errorf("goos %q, want linux", b.Goos)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		if !slices.Contains(b.Goarch, arch) {
			t.Errorf("goarch %q lacks %s", b.Goarch, arch)
		}
	}
	if !slices.Contains(b.Flags, "-trimpath") {
		t.Errorf("flags %q lack -trimpath (scripts/build-static uses it)", b.Flags)
	}
	if len(b.Ldflags) != 1 || b.Ldflags[0] != "-s -w -X main.version=v{{ .Version }}" {
		t.Errorf("ldflags %q, want the version stamped as scripts/build-static does", b.Ldflags)
	}
	script, err := os.ReadFile(filepath.Join(root, "scripts", "build-static"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), `-ldflags "-s -w -X main.version=$version"`) {
		t.Error("scripts/build-static no longer stamps the version the way the release does")
	}

	if len(c.Archives) != 1 {
		t.Fatalf("want one archive, got %d", len(c.Archives))
	}
	a := c.Archives[0]
	if !slices.Equal(a.Formats, []string{"tar.gz"}) || a.NameTemplate != "ingest_{{ .Version }}_{{ .Os }}_{{ .Arch }}" {
		t.Errorf("archive %q named %q: scripts/fetch-release downloads ingest_<version>_linux_<arch>.tar.gz", a.Formats, a.NameTemplate)
	}
	if !slices.Contains(a.Files, "LICENSE") {
		t.Errorf("archive files %q lack LICENSE", a.Files)
	}
	if _, err := os.Stat(filepath.Join(root, "LICENSE")); err != nil {
		t.Errorf("LICENSE: %v", err)
	}
	action, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var act actionFile
	if err := yaml.Unmarshal(action, &act); err != nil {
		t.Fatal(err)
	}
	if rel := c.Release.GitHub.Owner + "/" + c.Release.GitHub.Name; act.Inputs["release-repo"].Default == nil || *act.Inputs["release-repo"].Default != rel {
		t.Errorf("releases go to %s, but the action fetches them from release-repo %v", rel, act.Inputs["release-repo"].Default)
	}
	if c.Checksum.NameTemplate != "checksums.txt" || c.Checksum.Algorithm != "sha256" {
		t.Errorf("checksum %+v: scripts/fetch-release checks checksums.txt with sha256", c.Checksum)
	}
	if len(c.Sboms) != 1 || c.Sboms[0].Artifacts != "archive" {
		t.Errorf("sboms %+v: each released archive needs an SBOM", c.Sboms)
	}
}
