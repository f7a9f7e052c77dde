package telemetry

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/strictjson"
	tel "github.com/inferencex/ingest/ingest/telemetry"
	"github.com/inferencex/ingest/schema"
)

// sweepManifestFile is the required-power sweep manifest inside its
// artifact, required-power-sweep-manifest (docs/formats.md, "Required
// power").
const sweepManifestFile = "sweep_manifest.json"

// sweepManifest is the part of the manifest the contract needs.
type sweepManifest struct {
	SchemaVersion *int   `json:"schema-version"`
	RunID         *int64 `json:"run-id"`
	RunAttempt    *int   `json:"run-attempt"`
	Points        []struct {
		ConfigKey string `json:"config_key"`
		Identity  struct {
			RecipeFingerprint string `json:"recipe_fingerprint"`
			Concurrency       int32  `json:"concurrency"`
			BenchmarkType     string `json:"benchmark_type"`
			ISL               *int32 `json:"isl"`
			OSL               *int32 `json:"osl"`
			Model             string `json:"model"`
			Hardware          string `json:"hardware"`
			Framework         string `json:"framework"`
			Precision         string `json:"precision"`
		} `json:"identity"`
		Artifacts []struct {
			Path   string `json:"path"`
			SHA256 string `json:"sha256"`
		} `json:"artifacts"`
		Devices []struct {
			Node    string   `json:"node"`
			GPUUUID string   `json:"gpu_uuid"`
			Role    string   `json:"role"`
			EnergyJ *float64 `json:"energy_j"`
		} `json:"devices"`
	} `json:"points"`
}

// requiredPower checks the required-power contract: every point the
// manifest requires must be a written benchmark row of this run with valid
// published power (power_valid 1, schema version 2, positive avg_power_w,
// avg_total_gpu_power_w, total_gpu_energy_j, joules_per_output_token) and a
// stored telemetry series. Each violation is a failure naming the point.
func (st *telemetryStage) requiredPower(a *source.Artifact) {
	failRun := func(reason string) {
		st.env.Tally.Fail(schema.CategoryRun, a.Name, sweepManifestFile, reason)
	}
	fsys, err := st.fsOf(a)
	if err != nil {
		failRun(err.Error())
		return
	}
	b, err := readSmall(fsys, sweepManifestFile)
	if err != nil {
		failRun(fmt.Sprintf("cannot read the required-power manifest: %v", err))
		return
	}
	st.record(a).AddFile(sweepManifestFile, sha256.Sum256(b), int64(len(b)))
	var m sweepManifest
	if err := strictjson.Check(b); err != nil {
		failRun(fmt.Sprintf("malformed required-power manifest: %v", err))
		return
	}
	if err := json.Unmarshal(b, &m); err != nil {
		failRun(fmt.Sprintf("malformed required-power manifest: %v", err))
		return
	}
	if m.SchemaVersion == nil || *m.SchemaVersion != 2 {
		failRun("required-power manifest: schema-version is not 2")
		return
	}
	run := st.env.Start.Run
	if m.RunID == nil || *m.RunID != run.SourceRunID || (m.RunAttempt != nil && *m.RunAttempt != run.SourceRunAttempt) {
		failRun(fmt.Sprintf("required-power manifest names run %s, not run %d attempt %d", manifestRun(m), run.SourceRunID, run.SourceRunAttempt))
		return
	}
	for _, rp := range m.Points {
		id := rp.Identity
		name := fmt.Sprintf("%s conc %d", rp.ConfigKey, id.Concurrency)
		var match *tel.RunPoint
		for i := range st.state.Points {
			p := &st.state.Points[i]
			if p.Conc == id.Concurrency && p.RecipeFingerprint == id.RecipeFingerprint &&
				(id.BenchmarkType == "" || p.BenchmarkType == id.BenchmarkType) &&
				sameLen(p.ISL, id.ISL) && sameLen(p.OSL, id.OSL) &&
				sameKey(p.Hardware, id.Hardware) && sameKey(p.Model, id.Model) &&
				sameKey(p.Framework, id.Framework) && sameKey(p.Precision, id.Precision) {
				match = p
				break
			}
		}
		switch {
		case match == nil:
			failRun(fmt.Sprintf("required power point %s: no benchmark row of this run", name))
			continue
		case !validPower(*match):
			failRun(fmt.Sprintf("required power point %s: published power is not valid (%s)", name, powerProblem(*match)))
			continue
		case !st.measured[match.ID]:
			failRun(fmt.Sprintf("required power point %s: no stored telemetry series", name))
			continue
		}
		for _, ev := range rp.Artifacts {
			if problem := st.evidence(ev.Path, ev.SHA256); problem != "" {
				failRun(fmt.Sprintf("required power point %s: evidence %s %s", name, ev.Path, problem))
			}
		}
		if len(rp.Devices) > 0 {
			var sum float64
			ok := true
			for _, d := range rp.Devices {
				if d.EnergyJ == nil || !(*d.EnergyJ > 0) || math.IsInf(*d.EnergyJ, 0) {
					ok = false
				} else {
					sum += *d.EnergyJ
				}
			}
			total := *match.TotalGPUEnergyJ
			switch {
			case !ok:
				failRun(fmt.Sprintf("required power point %s: a device energy is missing or not positive", name))
			case math.Abs(sum-total) > math.Max(0.01, 1e-4*math.Abs(total)):
				failRun(fmt.Sprintf("required power point %s: device energies sum to %g J, total_gpu_energy_j is %g", name, sum, total))
			}
		}
	}
}

// evidence checks one hash-bound evidence file of a required point:
// "<artifact>/<file>" must exist in the tree with that sha256. It returns
// the problem, or "".
func (st *telemetryStage) evidence(p, want string) string {
	name, file, ok := strings.Cut(p, "/")
	if !ok {
		return "is not <artifact>/<file>"
	}
	a := st.env.Tree.Artifact(name)
	if a == nil {
		return "is missing (no such artifact)"
	}
	fsys, err := st.fsOf(a)
	if err != nil {
		return fmt.Sprintf("cannot be read: %v", err)
	}
	f, err := fsys.Open(file)
	if err != nil {
		return "is missing"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Sprintf("cannot be read: %v", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, want) {
		return "does not match its sha256"
	}
	return ""
}

func manifestRun(m sweepManifest) string {
	id, attempt := "?", "?"
	if m.RunID != nil {
		id = fmt.Sprint(*m.RunID)
	}
	if m.RunAttempt != nil {
		attempt = fmt.Sprint(*m.RunAttempt)
	}
	return id + " attempt " + attempt
}

func sameLen(stored, want *int32) bool {
	if want == nil {
		return stored == nil
	}
	return stored != nil && *stored == *want
}

// sameKey compares a manifest value with a stored key; an empty manifest
// value does not constrain.
func sameKey(stored, want string) bool {
	return want == "" || strings.EqualFold(stored, want)
}

func validPower(p tel.RunPoint) bool { return powerProblem(p) == "" }

func powerProblem(p tel.RunPoint) string {
	switch {
	case p.PowerValid == nil || *p.PowerValid != 1:
		return "power_valid is not 1"
	case p.PowerSchemaVersion == nil || *p.PowerSchemaVersion != 2:
		return "power_metric_schema_version is not 2"
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"avg_power_w", p.AvgPowerW}, {"avg_total_gpu_power_w", p.AvgTotalGPUPowerW},
		{"total_gpu_energy_j", p.TotalGPUEnergyJ}, {"joules_per_output_token", p.JoulesPerOutputTok}} {
		if f.v == nil || !(*f.v > 0) {
			return f.name + " is missing or not positive"
		}
	}
	return ""
}
