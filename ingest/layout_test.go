package ingest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// module is the import path prefix of this repository's packages.
const module = "github.com/inferencex/ingest/"

// formatPackages read and render formats; they know nothing of a run.
var formatPackages = []string{
	"ingest/benchmark", "ingest/eval", "ingest/trace", "ingest/telemetry", "ingest/changelog",
	"ingest/catalog", "ingest/overrides", "ingest/source", "ingest/strictjson", "ingest/export", "ingest/report",
	"ingest/quarantine", "ingest/receipt", "ingest/promotion", "ingest/weka",
}

// stagePackages are the pipeline's stages.
var stagePackages = []string{
	"ingest/stages/benchmarks", "ingest/stages/evals", "ingest/stages/traces", "ingest/stages/telemetry", "ingest/stages/changelog",
}

// layer is where a package sits in cli → pipeline → stages → runstate →
// formats → schema.
type layer int

const (
	layerOther layer = iota
	layerPipeline
	layerStage
	layerRunState
	layerFormat
	layerSchema
)

func layerOf(pkg string) layer {
	switch {
	case pkg == "ingest":
		return layerPipeline
	case strings.HasPrefix(pkg, "ingest/stages/"):
		return layerStage
	case pkg == "ingest/runstate":
		return layerRunState
	case pkg == "schema":
		return layerSchema
	}
	for _, f := range formatPackages {
		if pkg == f {
			return layerFormat
		}
	}
	return layerOther
}

// layoutViolations checks the one-way rule on deps, which maps each of the
// module's packages (path relative to the module) to all the module's
// packages it depends on, directly or not: no stage depends on another
// stage or on the pipeline (so on nothing that imports it, such as the
// cli); runstate depends on no stage and not on the pipeline; a format
// package depends on none of pipeline, stages and runstate; schema
// depends on nothing of ours.
func layoutViolations(deps map[string][]string) []string {
	var out []string
	for pkg, ds := range deps {
		from := layerOf(pkg)
		for _, d := range ds {
			to := layerOf(d)
			var why string
			switch {
			case from == layerSchema:
				why = "schema imports nothing of this module"
			case from == layerStage && to == layerStage:
				why = "a stage imports no other stage (shared state belongs in runstate)"
			case from == layerStage && to == layerPipeline:
				why = "a stage imports not the pipeline"
			case from == layerRunState && (to == layerStage || to == layerPipeline):
				why = "runstate imports no stage and not the pipeline"
			case from == layerFormat && (to == layerStage || to == layerPipeline || to == layerRunState):
				why = "a format package imports none of pipeline, stages and runstate"
			}
			if why != "" {
				out = append(out, pkg+" depends on "+d+": "+why)
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestLayoutRulesCatchEachViolation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		deps map[string][]string
		want int
	}{
		{"the intended flow", map[string][]string{
			"ingest/cli":              {"ingest", "ingest/stages/evals", "ingest/runstate", "ingest/eval", "schema"},
			"ingest":                  {"ingest/stages/evals", "ingest/stages/traces", "ingest/runstate", "ingest/eval", "schema"},
			"ingest/stages/evals":     {"ingest/runstate", "ingest/eval", "schema"},
			"ingest/runstate":         {"ingest/benchmark", "ingest/source", "schema"},
			"ingest/eval":             {"ingest/strictjson", "schema"},
			"schema":                  {},
			"ingest/store":            {"ingest/telemetry", "schema"},
			"ingest/stages/telemetry": {"ingest/telemetry", "ingest/runstate"},
		}, 0},
		{"stage imports a stage", map[string][]string{"ingest/stages/changelog": {"ingest/stages/evals"}}, 1},
		{"stage imports the pipeline", map[string][]string{"ingest/stages/traces": {"ingest"}}, 1},
		{"runstate imports a stage", map[string][]string{"ingest/runstate": {"ingest/stages/benchmarks"}}, 1},
		{"runstate imports the pipeline", map[string][]string{"ingest/runstate": {"ingest"}}, 1},
		{"format imports runstate", map[string][]string{"ingest/trace": {"ingest/runstate"}}, 1},
		{"format imports a stage", map[string][]string{"ingest/report": {"ingest/stages/evals"}}, 1},
		{"format imports the pipeline", map[string][]string{"ingest/telemetry": {"ingest"}}, 1},
		{"schema imports ours", map[string][]string{"schema": {"ingest/strictjson"}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Len(t, layoutViolations(tt.deps), tt.want)
		})
	}
}

// TestLayoutImportsFlowOneWay lists the module's packages with the go
// command and checks the one-way rule on what each depends on.
func TestLayoutImportsFlowOneWay(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command lists the packages")
	cmd := exec.Command(goTool, "list", "-json=ImportPath,Deps", "./...")
	cmd.Dir = ".." // the module root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())

	deps := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		pkg, ok := strings.CutPrefix(p.ImportPath, module)
		if !ok {
			continue
		}
		ours := []string{}
		for _, d := range p.Deps {
			if rel, ok := strings.CutPrefix(d, module); ok {
				ours = append(ours, rel)
			}
		}
		deps[pkg] = ours
	}
	// The rule is only as good as the names it checks: every package it
	// names must exist.
	for _, pkg := range append(append([]string{"ingest", "ingest/runstate", "schema"}, formatPackages...), stagePackages...) {
		require.Contains(t, deps, pkg, "the layout test names a package that does not exist")
	}
	for pkg := range deps {
		if strings.HasPrefix(pkg, "ingest/stages/") {
			require.Contains(t, stagePackages, pkg, "a new stage package: add it to stagePackages and docs/architecture.md")
		}
	}
	require.Empty(t, layoutViolations(deps))
}
