package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// workflowFiles lists the repository's own workflows and the examples a
// team copies.
func workflowFiles(t *testing.T, root string) (own, examples []string) {
	t.Helper()
	own, err := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	require.NoError(t, err)
	examples, err = filepath.Glob(filepath.Join(root, "examples", "*.yml"))
	require.NoError(t, err)
	return own, examples
}

// actionlint runs the actionlint pinned in go.mod's tool block (which runs
// shellcheck over every run: script when shellcheck is on PATH, as it is
// on GitHub's runners) and returns its output and exit code.
func actionlint(t *testing.T, root string, files ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"tool", "actionlint", "-no-color"}, files...)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	return string(out), exitCode(err)
}

// TestWorkflowsLint lints the repository's workflows and the examples with
// actionlint; a workflow it must reject shows the lint is not a no-op.
func TestWorkflowsLint(t *testing.T) {
	root := repoRoot(t)
	own, examples := workflowFiles(t, root)
	for _, want := range []string{"ci.yml", "release.yml"} {
		require.Contains(t, own, filepath.Join(root, ".github", "workflows", want), "no workflow %s", want)
	}
	require.NotEmpty(t, examples)
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Log("shellcheck is not installed: run: scripts are not checked")
	}
	out, code := actionlint(t, root, append(own, examples...)...)
	require.Equal(t, 0, code, "actionlint:\n%s", out)

	bad := filepath.Join(t.TempDir(), "bad.yml")
	require.NoError(t, os.WriteFile(bad, []byte("on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo ${{ steps.nope.outputs.x }}\n"), 0o644))
	out, code = actionlint(t, root, bad)
	require.NotEqual(t, 0, code, "actionlint passed a workflow naming an unknown step:\n%s", out)
}

var (
	usesLine  = regexp.MustCompile(`(?m)^\s*(?:-\s+)?uses:\s*(\S+)(.*)$`)
	pinnedRef = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$`)
	versionOf = regexp.MustCompile(`^\s*#\s*v\d+\.\d+\.\d+\s*$`)
)

// TestActionsPinned checks every third-party action used by the workflows,
// the examples (a team copies them into jobs holding its database
// secrets) and action.yml: pinned by a full commit SHA, the version it
// is named in a comment beside it, so a moved tag cannot change what runs
// in a job that holds credentials. Local actions and this repository's own
// Action (whose version a team picks) are exempt.
func TestActionsPinned(t *testing.T) {
	root := repoRoot(t)
	own, examples := workflowFiles(t, root)
	files := append(append(own, examples...), filepath.Join(root, "action.yml"))
	seen := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range usesLine.FindAllStringSubmatch(string(data), -1) {
			ref, rest := m[1], m[2]
			if strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "inferencex/ingest@") {
				continue
			}
			seen++
			if !pinnedRef.MatchString(ref) || !versionOf.MatchString(rest) {
				t.Errorf("%s: uses %s%s: pin a third-party action by commit SHA, its version in a comment (# v1.2.3)", filepath.Base(f), ref, rest)
			}
		}
	}
	require.NotZero(t, seen, "no third-party action found: is the pattern wrong?")
}

// workflow is the part of a workflow file the contract checks read.
type workflow struct {
	On          map[string]any `yaml:"on"`
	Concurrency any            `yaml:"concurrency"`
	Jobs        map[string]struct {
		If             string `yaml:"if"`
		Needs          any    `yaml:"needs"`
		Uses           string `yaml:"uses"`
		Environment    any    `yaml:"environment"`
		TimeoutMinutes int    `yaml:"timeout-minutes"`
		Concurrency    struct {
			Group            string `yaml:"group"`
			CancelInProgress any    `yaml:"cancel-in-progress"`
		} `yaml:"concurrency"`
		Services map[string]struct {
			Image string `yaml:"image"`
		} `yaml:"services"`
		Permissions map[string]string `yaml:"permissions"`
		Steps       []struct {
			Name string            `yaml:"name"`
			ID   string            `yaml:"id"`
			If   string            `yaml:"if"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			Env  map[string]string `yaml:"env"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
	Permissions map[string]string `yaml:"permissions"`
}

func readWorkflow(t *testing.T, path string) workflow {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var w workflow
	require.NoError(t, yaml.Unmarshal(data, &w), "%s", path)
	return w
}

// TestRepositoryWorkflows checks what the two workflows promise: CI runs
// .ci/run against PostgreSQL 15 on pull requests and pushes; a v* tag is
// released by GoReleaser and an image pushed to ghcr.io, each with a
// provenance attestation, only after the CI workflow passed.
func TestRepositoryWorkflows(t *testing.T) {
	root := repoRoot(t)
	ci := readWorkflow(t, filepath.Join(root, ".github", "workflows", "ci.yml"))
	for _, ev := range []string{"pull_request", "push", "workflow_call"} {
		require.Contains(t, ci.On, ev, "ci.yml does not run on %s", ev)
	}
	require.Equal(t, "read", ci.Permissions["contents"], "ci.yml's token must be read-only")
	ranCI := false
	for _, j := range ci.Jobs {
		pg := false
		for _, s := range j.Services {
			pg = pg || s.Image == "postgres:15"
		}
		for _, s := range j.Steps {
			if strings.Contains(s.Run, ".ci/run") {
				require.True(t, pg, "the job running .ci/run has no postgres:15 service")
				ranCI = true
			}
		}
	}
	require.True(t, ranCI, "no job of ci.yml runs .ci/run")

	rel := readWorkflow(t, filepath.Join(root, ".github", "workflows", "release.yml"))
	push, _ := rel.On["push"].(map[string]any)
	require.Equal(t, []any{"v[0-9]+.[0-9]+.[0-9]+*"}, push["tags"], "release.yml must run on vX.Y.Z tags (not on the floating vX it moves)")
	require.Len(t, rel.On, 1, "release.yml runs on tags only")
	require.Equal(t, "./.github/workflows/ci.yml", rel.Jobs["test"].Uses, "the release does not run the tests")
	var goreleaser, ghcr, attested int
	for name, j := range rel.Jobs {
		if name == "test" {
			continue
		}
		if name == "major-tag" {
			require.ElementsMatch(t, []any{"binaries", "image"}, j.Needs, "vX must move only once the release is out")
			continue
		}
		require.Equal(t, "test", j.Needs, "release job %s does not wait for the tests", name)
		for _, s := range j.Steps {
			switch {
			case strings.HasPrefix(s.Uses, "goreleaser/goreleaser-action@"):
				require.Equal(t, "release --clean", s.With["args"])
				goreleaser++
			case strings.HasPrefix(s.Uses, "docker/login-action@"):
				require.Equal(t, "ghcr.io", s.With["registry"])
				require.Equal(t, "write", j.Permissions["packages"], "job %s pushes without packages: write", name)
				ghcr++
			case strings.HasPrefix(s.Uses, "actions/attest-build-provenance@"):
				require.Equal(t, "write", j.Permissions["id-token"])
				require.Equal(t, "write", j.Permissions["attestations"])
				attested++
			}
		}
	}
	require.Equal(t, 1, goreleaser, "release.yml must run GoReleaser once")
	require.Equal(t, 1, ghcr, "release.yml must log in to ghcr.io once")
	require.Equal(t, 2, attested, "the archives and the image each need a provenance attestation")
	require.True(t, slices.Contains([]string{"", "read"}, rel.Permissions["contents"]), "release.yml's default token must be read-only")
}

// TestExampleWorkflows checks the examples against what made them unsafe
// to copy: a pull request's dry run seeing production's credentials or
// sharing a concurrency group with the production apply; a Verify step
// skipped exactly when the run was written with failures (exit 3); a job
// timeout the runner reaches before the tool's statement timeout; the tool
// compiled with go run where a release serves; an audit run twice; a
// read-only role named as the write URL.
func TestExampleWorkflows(t *testing.T) {
	root := repoRoot(t)
	ex := func(name string) (workflow, string) {
		data, err := os.ReadFile(filepath.Join(root, "examples", name))
		require.NoError(t, err)
		return readWorkflow(t, filepath.Join(root, "examples", name)), string(data)
	}
	// The tool's default --statement-timeout, in minutes (README's settings table).
	const statementTimeoutMinutes = 30

	t.Run("apply-overrides", func(t *testing.T) {
		w, _ := ex("apply-overrides.yml")
		require.Nil(t, w.Concurrency, "a workflow-wide concurrency group lets a pull request's dry run cancel or hold a production apply")
		groups := map[string]string{}
		var prodJob string
		for name, j := range w.Jobs {
			onPR := !strings.Contains(j.If, "!= 'pull_request'") && j.Needs == nil
			for _, st := range j.Steps {
				for k, v := range st.Env {
					if strings.Contains(v, "secrets.DATABASE_WRITE_URL }}") && onPR {
						t.Errorf("job %s runs on pull requests and sees production's URL (%s)", name, k)
					}
					if strings.Contains(v, "secrets.DATABASE_WRITE_URL }}") {
						prodJob = name
					}
				}
			}
			require.NotEmpty(t, j.Concurrency.Group, "job %s has no concurrency group", name)
			if other, ok := groups[j.Concurrency.Group]; ok {
				t.Errorf("jobs %s and %s share concurrency group %s", name, other, j.Concurrency.Group)
			}
			groups[j.Concurrency.Group] = name
		}
		require.NotEmpty(t, prodJob, "no job applies to production")
		p := w.Jobs[prodJob]
		require.Equal(t, "staging", p.Needs, "production must wait for staging (needs:), not rely on matrix order")
		require.Equal(t, "production", p.Environment, "production's URL belongs in the production environment")
		require.Equal(t, false, p.Concurrency.CancelInProgress)
	})

	t.Run("ingest-after-merge", func(t *testing.T) {
		w, text := ex("ingest-after-merge.yml")
		require.NotContains(t, text, "go run", "use the Action or the released binary")
		j := w.Jobs["ingest"]
		require.Greater(t, j.TimeoutMinutes, statementTimeoutMinutes, "the job must outlive the tool's statement timeout")
		var ingest, verify bool
		for _, st := range j.Steps {
			if strings.HasPrefix(st.Uses, "inferencex/ingest@") {
				ingest = true
			}
			if st.Name == "Verify" {
				verify = true
				require.Contains(t, st.If, "!cancelled()", "Verify's if: implies success() and skips exit 3")
				require.Contains(t, st.If, "completed_with_failures")
			}
		}
		require.True(t, ingest, "the ingest does not use the Action")
		require.True(t, verify, "no Verify step")
	})

	t.Run("stage-results", func(t *testing.T) {
		w, _ := ex("stage-results.yml")
		for name, j := range w.Jobs {
			require.Greater(t, j.TimeoutMinutes, statementTimeoutMinutes, "job %s must outlive the tool's statement timeout", name)
			for _, st := range j.Steps {
				if strings.HasPrefix(st.Uses, "actions/cache/") {
					require.Contains(t, st.With["key"], "github.run_attempt", "a cache key without the attempt freezes a failed attempt's cache")
				}
			}
		}
	})

	t.Run("nightly-audit", func(t *testing.T) {
		_, text := ex("nightly-audit.yml")
		require.Equal(t, 1, strings.Count(text, "ingest audit "), "the audit must run once")
		require.NotContains(t, text, "go run")
		require.NotContains(t, text, "DATABASE_WRITE_URL", "a read-only role is not a write URL")
		require.Contains(t, text, "secrets.DATABASE_READONLY_URL")
	})
}
