package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/inferencex/ingest/ingest/cli"
)

// actionFile is the part of action.yml the checks read.
type actionFile struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Inputs      map[string]struct {
		Description string  `yaml:"description"`
		Required    bool    `yaml:"required"`
		Default     *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID    string            `yaml:"id"`
			Name  string            `yaml:"name"`
			Shell string            `yaml:"shell"`
			Env   map[string]string `yaml:"env"`
			Run   string            `yaml:"run"`
			Uses  string            `yaml:"uses"`
			If    string            `yaml:"if"`
			With  map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

var (
	inputRef     = regexp.MustCompile(`\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}`)
	stepOutRef   = regexp.MustCompile(`\$\{\{\s*steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)\s*\}\}`)
	exportedName = regexp.MustCompile(`(?m)^\s*export\s+([A-Z_][A-Z0-9_]*)=`)
)

// TestActionDefinition validates action.yml: a composite action whose
// steps use only declared inputs, pass them through the environment (never
// into the script text), name their shell, and give `ingest run` only
// variables it reads.
func TestActionDefinition(t *testing.T) {
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Name == "" || a.Description == "" {
		t.Error("action.yml needs a name and a description")
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using %q, want composite", a.Runs.Using)
	}
	for name, in := range a.Inputs {
		if in.Description == "" {
			t.Errorf("input %s has no description", name)
		}
		if in.Required && in.Default != nil {
			t.Errorf("input %s is required and has a default", name)
		}
	}
	for _, required := range []string{"run-id", "database-url"} {
		if !a.Inputs[required].Required {
			t.Errorf("input %s must be required", required)
		}
	}

	used := map[string]bool{}
	ids := map[string]bool{}
	runEnv := map[string]bool{}
	ranIngest := false
	for i, s := range a.Runs.Steps {
		label := fmt.Sprintf("step %d (%s)", i+1, s.Name)
		if s.ID != "" {
			ids[s.ID] = true
		}
		for _, v := range s.With {
			for _, m := range inputRef.FindAllStringSubmatch(v, -1) {
				used[m[1]] = true
			}
		}
		for _, m := range regexp.MustCompile(`inputs\.([A-Za-z0-9_-]+)`).FindAllStringSubmatch(s.If, -1) {
			used[m[1]] = true
		}
		if s.Uses != "" {
			continue // an action step: TestActionsPinned checks its pin
		}
		if s.Run == "" {
			t.Errorf("%s runs nothing", label)
			continue
		}
		if s.Shell == "" {
			t.Errorf("%s has no shell (a composite step must name one)", label)
		}
		if strings.Contains(s.Run, "${{") {
			t.Errorf("%s puts an expression into its script text; pass it through env", label)
		}
		for _, v := range s.Env {
			for _, m := range inputRef.FindAllStringSubmatch(v, -1) {
				used[m[1]] = true
			}
		}
		if strings.Contains(s.Run, "ingest run") {
			ranIngest = true
			for k := range s.Env {
				runEnv[k] = true
			}
			for _, m := range exportedName.FindAllStringSubmatch(s.Run, -1) {
				runEnv[m[1]] = true
			}
		}
		for _, m := range regexp.MustCompile(`\$ACTION_PATH/([A-Za-z0-9_./-]+)`).FindAllStringSubmatch(s.Run, -1) {
			st, err := os.Stat(filepath.Join(root, m[1]))
			if err != nil {
				t.Errorf("%s runs %s: %v", label, m[1], err)
			} else if st.Mode()&0o111 == 0 {
				t.Errorf("%s runs %s, which is not executable", label, m[1])
			}
		}
	}
	for name := range used {
		if _, ok := a.Inputs[name]; !ok {
			t.Errorf("a step uses inputs.%s, which is not declared", name)
		}
	}
	for name := range a.Inputs {
		if !used[name] {
			t.Errorf("input %s is declared and never used", name)
		}
	}
	for name, o := range a.Outputs {
		m := stepOutRef.FindStringSubmatch(o.Value)
		if m == nil || !ids[m[1]] {
			t.Errorf("output %s = %q names no step of the action", name, o.Value)
		}
	}
	if !ranIngest {
		t.Fatal("no step runs `ingest run`")
	}

	// Every variable the run step sets must be one `ingest run` reads.
	var help bytes.Buffer
	cli.Main(context.Background(), []string{"run", "--help"}, cli.Env{Stdout: &help, Stderr: &help, Getenv: func(string) string { return "" }})
	readable := map[string]bool{"GITHUB_TOKEN": true} // the token is never a flag; `ingest run --help` says where it comes from
	for _, m := range regexp.MustCompile(`[A-Z][A-Z0-9_]+`).FindAllString(help.String(), -1) {
		readable[m] = true
	}
	if !readable["INGEST_RUN_ID"] {
		t.Fatalf("`ingest run --help` names no INGEST_RUN_ID; output:\n%s", help.String())
	}
	for name := range runEnv {
		if strings.HasPrefix(name, "INPUT_") {
			continue // the step's own inputs, read by its script
		}
		if !readable[name] {
			t.Errorf("the run step sets %s, which `ingest run` does not read", name)
		}
	}
}

// TestFetchRelease runs scripts/fetch-release against a fake GitHub (the
// releases API and the download URLs) serving a release built here: the
// latest tag is resolved, the archive checked against checksums.txt and
// its binary installed; a wrong checksum, a missing release or a malformed
// version is refused.
func TestFetchRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds release archives: not under -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the script installs Linux binaries")
	}
	for _, tool := range []string{"bash", "curl", "jq", "tar", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	arch := map[string]string{"amd64": "amd64", "arm64": "arm64"}[runtime.GOARCH]
	if arch == "" {
		t.Skipf("no release for %s", runtime.GOARCH)
	}
	payload := []byte("#!/bin/sh\necho fake ingest v1.4.2\n")
	archive := tarGz(t, "ingest", payload)
	name := "ingest_1.4.2_linux_" + arch + ".tar.gz"
	sum := sha256.Sum256(archive)

	type release struct{ sums string }
	good := func(version string) *release {
		return &release{sums: hex.EncodeToString(sum[:]) + "  " + strings.Replace(name, "1.4.2", version, 1) + "\n"}
	}
	releases := map[string]*release{
		"v1.4.2":  good("1.4.2"),
		"v1.4.3":  {sums: strings.Repeat("0", 64) + "  " + strings.Replace(name, "1.4.2", "1.4.3", 1) + "\n"},
		"v1.10.1": good("1.10.1"),
		"v1.9.0":  good("1.9.0"),
	}
	// The releases list, two pages of it: a floating tag must read both,
	// order by version (v1.10.1 after v1.9.0) and pass drafts and
	// prereleases by.
	releasePages := []string{
		`[{"tag_name":"v2.0.0-rc.1","prerelease":true,"draft":false},{"tag_name":"v1.11.0","draft":true,"prerelease":false},{"tag_name":"v1.9.0","draft":false,"prerelease":false}]`,
		`[{"tag_name":"v1.10.1","draft":false,"prerelease":false},{"tag_name":"v1.4.3","draft":false,"prerelease":false},{"tag_name":"v1.4.2","draft":false,"prerelease":false},{"tag_name":"v10.0.0","draft":false,"prerelease":false}]`,
	}
	releaseSHA, floatSHA, plainSHA := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	tagPages := []string{
		fmt.Sprintf(`[{"name":"v1","commit":{"sha":%q}},{"name":"v1.10.1","commit":{"sha":%q}}]`, floatSHA, floatSHA),
		fmt.Sprintf(`[{"name":"v1.4.2","commit":{"sha":%q}},{"name":"nightly","commit":{"sha":%q}}]`, releaseSHA, plainSHA),
	}
	listPage := func(w http.ResponseWriter, r *http.Request, pages []string) {
		n, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if n < 1 || n > len(pages) {
			fmt.Fprint(w, "[]")
			return
		}
		fmt.Fprint(w, pages[n-1])
	}
	var (
		mu       sync.Mutex // the handler runs on the server's goroutines
		latest   = "v1.4.2"
		requests []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		requests = append(requests, r.URL.Path+" auth="+r.Header.Get("Authorization"))
		switch {
		case r.URL.Path == "/api/repos/acme/ingest/releases/latest":
			if latest == "" {
				http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
				return
			}
			fmt.Fprintf(w, `{"tag_name":%q,"name":"release"}`, latest)
		case r.URL.Path == "/api/repos/acme/ingest/releases":
			listPage(w, r, releasePages)
		case r.URL.Path == "/api/repos/acme/ingest/tags":
			listPage(w, r, tagPages)
		case strings.HasPrefix(r.URL.Path, "/acme/ingest/releases/download/"):
			parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/acme/ingest/releases/download/"), "/")
			rel := releases[parts[0]]
			if rel == nil || len(parts) != 2 {
				http.NotFound(w, r)
				return
			}
			switch {
			case parts[1] == "checksums.txt":
				fmt.Fprint(w, rel.sums)
			case strings.HasSuffix(parts[1], ".tar.gz"):
				w.Write(archive)
			default:
				http.NotFound(w, r)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	script := filepath.Join(repoRoot(t), "scripts", "fetch-release")
	run := func(version string) (string, string, int) {
		dest := filepath.Join(t.TempDir(), "bin")
		cmd := exec.Command(script, dest)
		cmd.Env = append(os.Environ(),
			"INGEST_RELEASE_REPO=acme/ingest", "INGEST_VERSION="+version, "GH_TOKEN=tok",
			"GITHUB_SERVER_URL="+srv.URL, "GITHUB_API_URL="+srv.URL+"/api")
		out, err := cmd.CombinedOutput()
		return dest, string(out), exitCode(err)
	}

	dest, out, code := run("latest")
	if code != 0 {
		t.Fatalf("fetch latest: exit %d\n%s", code, out)
	}
	got, err := os.ReadFile(filepath.Join(dest, "ingest"))
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("installed binary %q (%v), want the release's", got, err)
	}
	if st, _ := os.Stat(filepath.Join(dest, "ingest")); st == nil || st.Mode()&0o111 == 0 {
		t.Error("the installed binary is not executable")
	}
	mu.Lock()
	if !slices.Contains(requests, "/api/repos/acme/ingest/releases/latest auth=Bearer tok") {
		t.Errorf("the latest release was not asked for with the token: %q", requests)
	}
	mu.Unlock()

	// What each form of version installs: a floating tag the newest
	// published release under it, a commit the release tagged there.
	for _, tc := range []struct{ version, installs string }{
		{"v1.4.2", "v1.4.2"},
		{"v1", "v1.10.1"},
		{"v1.9", "v1.9.0"},
		{releaseSHA, "v1.4.2"},
		{floatSHA, "v1.10.1"},
	} {
		_, out, code := run(tc.version)
		if code != 0 || !strings.Contains(out, "ingest "+tc.installs+" ("+arch+") installed") {
			t.Errorf("version %s: want %s installed, got exit %d\n%s", tc.version, tc.installs, code, out)
		}
	}
	if _, out, code := run("v1.4"); code == 0 || !strings.Contains(out, "checksums.txt says") {
		t.Errorf("v1.4 did not resolve to v1.4.3 (whose checksum is wrong): exit %d\n%s", code, out)
	}
	if _, out, code := run("v3"); code != 1 || !strings.Contains(out, "no release v3.x") {
		t.Errorf("a major version without a release: exit %d\n%s", code, out)
	}
	if _, out, code := run(plainSHA); code != 2 || !strings.Contains(out, "set the version") {
		t.Errorf("a commit no release is tagged at was not refused: exit %d\n%s", code, out)
	}

	if _, out, code := run("v1.4.3"); code == 0 || !strings.Contains(out, "checksums.txt says") {
		t.Errorf("a checksum mismatch was not refused: exit %d\n%s", code, out)
	}
	if _, out, code := run("v2.0.0"); code == 0 {
		t.Errorf("a release that does not exist was installed: exit %d\n%s", code, out)
	}
	if _, out, code := run("main; rm -rf /"); code != 2 || !strings.Contains(out, "must be a tag") {
		t.Errorf("a malformed version was not refused as usage: exit %d\n%s", code, out)
	}
	mu.Lock()
	latest = ""
	mu.Unlock()
	if _, out, code := run("latest"); code == 0 {
		t.Errorf("no latest release, yet exit 0\n%s", out)
	}
}

func tarGz(t *testing.T, name string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestActionRunStep runs the action's ingest step script with bash and a
// stand-in `ingest` that prints what it was given: the URL reaches the
// tool under the target's own variable, the summary path is an output,
// and a malformed target name stops the step before the tool runs.
func TestActionRunStep(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "action.yml"))
	require.NoError(t, err)
	var a actionFile
	require.NoError(t, yaml.Unmarshal(data, &a))
	var script string
	for _, s := range a.Runs.Steps {
		if s.ID == "ingest" {
			script = s.Run
		}
	}
	require.NotEmpty(t, script, "no step with id ingest")

	bin := t.TempDir()
	stub := "#!/bin/sh\necho \"args=$*\"\nenv | grep -E '^(DATABASE_WRITE_URL|INGEST_TARGET|INGEST_SUMMARY_JSON|INGEST_CACHE_DIR)' | sort\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "ingest"), []byte(stub), 0o755))

	for _, tc := range []struct {
		target   string
		want     []string
		wantCode int
	}{
		{"", []string{"args=run", "DATABASE_WRITE_URL=postgres://db/x", "INGEST_TARGET=production"}, 0},
		{"production", []string{"DATABASE_WRITE_URL=postgres://db/x", "INGEST_TARGET=production"}, 0},
		{"staging", []string{"DATABASE_WRITE_URL_STAGING=postgres://db/x", "INGEST_TARGET=staging"}, 0},
		{"dev.branch-1", []string{"DATABASE_WRITE_URL_DEV_BRANCH_1=postgres://db/x", "INGEST_TARGET=dev.branch-1"}, 0},
		{"x; rm -rf /", nil, 2},
	} {
		t.Run(tc.target, func(t *testing.T) {
			tmp := t.TempDir()
			out := filepath.Join(tmp, "github_output")
			cmd := exec.Command("bash", "-e", "-c", script)
			env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "RUNNER_TEMP=" + tmp, "GITHUB_OUTPUT=" + out,
				"INPUT_DATABASE_URL=postgres://db/x", "INPUT_TARGET=" + tc.target}
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "DATABASE_") && !strings.HasPrefix(kv, "INGEST_") && !strings.HasPrefix(kv, "PATH=") {
					env = append(env, kv)
				}
			}
			cmd.Env = env
			got, err := cmd.CombinedOutput()
			require.Equal(t, tc.wantCode, exitCode(err), "%s", got)
			if tc.wantCode != 0 {
				require.NotContains(t, string(got), "args=", "the tool ran")
				return
			}
			lines := strings.Split(strings.TrimSpace(string(got)), "\n")
			for _, w := range tc.want {
				require.Contains(t, lines, w)
			}
			urls := 0
			for _, l := range lines {
				if strings.HasPrefix(l, "DATABASE_WRITE_URL") {
					urls++
				}
			}
			require.Equal(t, 1, urls, "the URL is given under one variable only: %q", lines)
			require.Contains(t, lines, "INGEST_SUMMARY_JSON="+filepath.Join(tmp, "ingest-summary.json"))
			o, err := os.ReadFile(out)
			require.NoError(t, err)
			require.Equal(t, "summary-json="+filepath.Join(tmp, "ingest-summary.json")+"\n", string(o))
		})
	}
}

// actionStep returns the action's step of that id or name.
func actionStep(t *testing.T, idOrName string) (script string, env map[string]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "action.yml"))
	require.NoError(t, err)
	var a actionFile
	require.NoError(t, yaml.Unmarshal(data, &a))
	for _, s := range a.Runs.Steps {
		if s.ID == idOrName || s.Name == idOrName {
			return s.Run, s.Env
		}
	}
	t.Fatalf("action.yml has no step %q", idOrName)
	return "", nil
}

// runStep runs a step's script with bash as a composite step does
// (bash -e), with env and PATH prefixed by bin.
func runStep(t *testing.T, script, bin string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
	cmd.Env = append([]string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), exitCode(err)
}

// TestActionExitThree runs the ingest step with a stand-in tool exiting
// 0, 1 and 3: exit 3 (written, with designed failures) fails the step
// unless fail-on-failures is "false"; any other failure always does.
func TestActionExitThree(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	script, _ := actionStep(t, "ingest")
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "ingest"), []byte("#!/bin/sh\nexit \"$STUB_CODE\"\n"), 0o755))
	for _, tc := range []struct {
		code     string
		failOn   string
		wantCode int
	}{
		{"0", "true", 0},
		{"3", "true", 3},
		{"3", "", 3},
		{"3", "false", 0},
		{"1", "false", 1},
		{"2", "false", 2},
	} {
		t.Run(tc.code+"/"+tc.failOn, func(t *testing.T) {
			tmp := t.TempDir()
			out, code := runStep(t, script, bin, "RUNNER_TEMP="+tmp, "GITHUB_OUTPUT="+filepath.Join(tmp, "out"),
				"INPUT_DATABASE_URL=postgres://db/x", "STUB_CODE="+tc.code, "INPUT_FAIL_ON_FAILURES="+tc.failOn)
			require.Equal(t, tc.wantCode, code, "%s", out)
		})
	}
}

// TestActionFetchStep runs the fetch step with a stand-in
// scripts/fetch-release that prints the version it was asked for: the
// version input wins; else the ref the action is used at (a tag, a major
// version, a commit) is passed on; a branch is refused before anything is
// fetched, saying to set the version.
func TestActionFetchStep(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	script, _ := actionStep(t, "Fetch ingest")
	actionPath := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(actionPath, "scripts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(actionPath, "scripts", "fetch-release"), []byte("#!/bin/sh\necho \"fetch $INGEST_VERSION\"\n"), 0o755))
	sha := strings.Repeat("0123456789", 4)
	for _, tc := range []struct {
		input, ref string
		want       string
		wantCode   int
	}{
		{"", "v1.2.3", "fetch v1.2.3", 0},
		{"", "v1", "fetch v1", 0},
		{"", sha, "fetch " + sha, 0},
		{"", "", "fetch latest", 0},
		{"v1.4.0", "main", "fetch v1.4.0", 0},
		{"latest", sha, "fetch latest", 0},
		{"", "main", "set the version input", 2},
		{"", "feature/x", "set the version input", 2},
	} {
		t.Run(tc.input+"@"+tc.ref, func(t *testing.T) {
			tmp := t.TempDir()
			out, code := runStep(t, script, t.TempDir(), "RUNNER_TEMP="+tmp, "GITHUB_PATH="+filepath.Join(tmp, "path"),
				"ACTION_PATH="+actionPath, "ACTION_REF="+tc.ref, "INPUT_VERSION="+tc.input)
			require.Equal(t, tc.wantCode, code, "%s", out)
			require.Contains(t, out, tc.want)
			if tc.wantCode != 0 {
				require.NotContains(t, out, "fetch ", "fetch-release ran")
			}
		})
	}
}

// TestActionOutputs checks that the action passes through every step
// output the tool writes for an ingest (ingest/cli/githuboutput.go), each
// from the ingest step.
func TestActionOutputs(t *testing.T) {
	root := repoRoot(t)
	src, err := os.ReadFile(filepath.Join(root, "ingest", "cli", "githuboutput.go"))
	require.NoError(t, err)
	names := regexp.MustCompile(`\{"([a-z][a-z-]*)",`).FindAllStringSubmatch(string(src), -1)
	require.GreaterOrEqual(t, len(names), 10, "found too few outputs in githuboutput.go: is the pattern wrong?")
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	require.NoError(t, err)
	var a actionFile
	require.NoError(t, yaml.Unmarshal(data, &a))
	for _, m := range names {
		o, ok := a.Outputs[m[1]]
		if !ok {
			t.Errorf("the tool writes output %s, which action.yml does not pass through", m[1])
			continue
		}
		if want := "${{ steps.ingest.outputs." + m[1] + " }}"; o.Value != want {
			t.Errorf("output %s = %q, want %q", m[1], o.Value, want)
		}
	}
}

// TestActionCache checks the artifact cache's keys: saved under a key of
// this attempt (github.run_id and github.run_attempt), even when the
// ingest failed, and restored by the prefixes of this run and of the
// source run, so a failed attempt's partial cache cannot freeze and a
// promotion reuses what staging downloaded.
func TestActionCache(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "action.yml"))
	require.NoError(t, err)
	var a actionFile
	require.NoError(t, yaml.Unmarshal(data, &a))
	var restoreKey, restoreKeys, saveKey, saveIf, restorePath, savePath string
	for _, s := range a.Runs.Steps {
		switch {
		case strings.HasPrefix(s.Uses, "actions/cache/restore@"):
			restoreKey, restoreKeys, restorePath = s.With["key"], s.With["restore-keys"], s.With["path"]
		case strings.HasPrefix(s.Uses, "actions/cache/save@"):
			saveKey, saveIf, savePath = s.With["key"], s.If, s.With["path"]
		}
	}
	require.NotEmpty(t, restoreKey, "no actions/cache/restore step")
	require.NotEmpty(t, saveKey, "no actions/cache/save step")
	require.Equal(t, restoreKey, saveKey)
	require.Equal(t, restorePath, savePath)
	for _, part := range []string{"inputs.run-id", "github.run_id", "github.run_attempt"} {
		require.Contains(t, saveKey, part)
	}
	prefixes := strings.Split(strings.TrimSpace(restoreKeys), "\n")
	require.Len(t, prefixes, 2, "restore-keys: this run's attempts, then any run of the source run")
	require.True(t, strings.HasPrefix(saveKey, prefixes[0]) && strings.HasPrefix(prefixes[0], prefixes[1]), "restore-keys %q are not prefixes of %q", prefixes, saveKey)
	require.NotContains(t, prefixes[0], "run_attempt")
	require.NotContains(t, prefixes[1], "github.run_id")
	require.Contains(t, saveIf, "always()", "a failed ingest's downloads must be saved for the rerun")
}
