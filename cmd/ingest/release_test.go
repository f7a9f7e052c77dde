package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The release paths, without a Docker engine or GoReleaser: the static build
// script the container image runs, the image's Dockerfile, the GoReleaser
// configuration and the composite action (action_test.go) state one
// contract: a static Linux binary, built without cgo, that names the
// version it was stamped with.

// maxBinaryBytes is the size the binary must stay under (the Parquet
// writer may grow it, never past this).
const maxBinaryBytes = 45 << 20

// repoRoot is the module root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestReleaseBuild runs scripts/build-static, the Dockerfile's build step,
// and checks what the image would ship: a static executable, under the size
// limit, whose `ingest version` names the stamped version.
func TestReleaseBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	root := repoRoot(t)
	bin := filepath.Join(t.TempDir(), "ingest")
	build := exec.Command(filepath.Join(root, "scripts", "build-static"), bin, "v9.8.7-test")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("scripts/build-static: %v\n%s", err, out)
	}

	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("ingest version: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "ingest v9.8.7-test") {
		t.Errorf("ingest version printed %q, want it to start with %q", out, "ingest v9.8.7-test")
	}
	flagOut, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || string(flagOut) != string(out) {
		t.Errorf("ingest --version printed %q (%v), want what ingest version prints, %q", flagOut, err, out)
	}

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("the build is not an ELF executable: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary has a %v program header: it is dynamically linked (cgo?)", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary imports shared libraries %v", libs)
	}
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() >= maxBinaryBytes {
		t.Errorf("the binary is %d bytes, over the %d limit", st.Size(), maxBinaryBytes)
	}
	t.Logf("static binary: %d bytes", st.Size())
}

// TestBuildStaticUsage: the script refuses a call without its output path.
func TestBuildStaticUsage(t *testing.T) {
	cmd := exec.Command(filepath.Join(repoRoot(t), "scripts", "build-static"))
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 2 {
		t.Fatalf("build-static without arguments exited %d (%v), want 2\n%s", code, err, out)
	}
	if !strings.Contains(string(out), "usage: scripts/build-static OUT") {
		t.Errorf("no usage line: %s", out)
	}
}

// TestDockerfile checks the image definition against the contract: the Go
// version of go.mod, the build step CI runs, a static non-root final stage
// whose entrypoint is the copied binary.
func TestDockerfile(t *testing.T) {
	root := repoRoot(t)
	lines := dockerfileInstructions(t, filepath.Join(root, "Dockerfile"))
	goVersion := goModVersion(t, filepath.Join(root, "go.mod"))

	var froms, runs, users, entry, copies []string
	args := map[string]string{}
	for _, l := range lines {
		word, rest, _ := strings.Cut(l, " ")
		switch strings.ToUpper(word) {
		case "ARG":
			k, v, _ := strings.Cut(rest, "=")
			args[k] = strings.Trim(v, `"`)
		case "FROM":
			froms = append(froms, rest)
		case "RUN":
			runs = append(runs, rest)
		case "USER":
			users = append(users, rest)
		case "ENTRYPOINT":
			entry = append(entry, rest)
		case "COPY":
			copies = append(copies, rest)
		}
	}
	if len(froms) != 2 {
		t.Fatalf("want a build stage and a final stage, got FROM %q", froms)
	}
	// The build stage runs on the builder's platform and cross-compiles
	// for the target's, so the release's arm64 image needs no emulation.
	if want := "--platform=$BUILDPLATFORM golang:${GO_VERSION} AS build"; froms[0] != want {
		t.Errorf("build stage is FROM %q, want %q", froms[0], want)
	}
	if !strings.HasPrefix(goVersion, args["GO_VERSION"]+".") && goVersion != args["GO_VERSION"] {
		t.Errorf("ARG GO_VERSION=%s does not match go.mod's go %s", args["GO_VERSION"], goVersion)
	}
	if !strings.HasPrefix(froms[1], "gcr.io/distroless/static") || !strings.HasSuffix(froms[1], ":nonroot") {
		t.Errorf("final stage is FROM %q, want a distroless static nonroot base", froms[1])
	}
	if !contains(runs, `GOOS=$TARGETOS GOARCH=$TARGETARCH ./scripts/build-static /out/ingest "$VERSION"`) {
		t.Errorf("no RUN of scripts/build-static (the step CI tests): %q", runs)
	}
	if len(users) != 1 || strings.HasPrefix(users[0], "root") || strings.HasPrefix(users[0], "0") {
		t.Errorf("USER %q: the image must run as a non-root user", users)
	}
	if !contains(copies, "--from=build /out/ingest /usr/local/bin/ingest") {
		t.Errorf("the final stage does not copy the built binary: COPY %q", copies)
	}
	if len(entry) != 1 || entry[0] != `["/usr/local/bin/ingest"]` {
		t.Errorf("ENTRYPOINT %q, want the copied binary", entry)
	}
}

// dockerfileInstructions returns the Dockerfile's instructions, comments
// and blank lines dropped, continuation lines joined.
func dockerfileInstructions(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var cur strings.Builder
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if s, ok := strings.CutSuffix(l, `\`); ok {
			cur.WriteString(strings.TrimSpace(s) + " ")
			continue
		}
		cur.WriteString(l)
		out = append(out, cur.String())
		cur.Reset()
	}
	return out
}

func goModVersion(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("go.mod has no go directive")
	return ""
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// TestComposeHealthcheck: docker-compose.yml's healthcheck asks the server
// over TCP (the image's temporary init server listens on the Unix socket
// only, so a socket check passes too early and `up --wait` returns before
// the server is up) and gives the first start a start period.
func TestComposeHealthcheck(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]struct {
			Image       string `yaml:"image"`
			Healthcheck struct {
				Test        []string `yaml:"test"`
				StartPeriod string   `yaml:"start_period"`
			} `yaml:"healthcheck"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	pg, ok := c.Services["postgres"]
	if !ok {
		t.Fatal("no postgres service")
	}
	test := strings.Join(pg.Healthcheck.Test, " ")
	if !strings.Contains(test, "pg_isready") || !strings.Contains(test, "-h 127.0.0.1") {
		t.Errorf("healthcheck %q does not ask over TCP (-h 127.0.0.1)", test)
	}
	if pg.Healthcheck.StartPeriod == "" {
		t.Error("healthcheck has no start_period for the first start's initdb")
	}
}
