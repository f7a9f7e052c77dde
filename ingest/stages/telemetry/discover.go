package telemetry

import (
	"encoding/json"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/strictjson"
	tel "github.com/inferencex/ingest/ingest/telemetry"
)

// telemetrySource is the one artifact a suffix's telemetry is read from.
type telemetrySource struct {
	artifact *source.Artifact
	kind     runstate.Kind
	suffix   string
}

// dcgmSamplesPath is the multinode DCGM bundle's samples inside
// power_audit_<RF>: one CSV for every host of the point (docs/formats.md,
// "Telemetry: GPU metrics and power").
const dcgmSamplesPath = "LOGS/power/samples.csv"

// telemetryPrefixes are the artifact kinds that carry telemetry, in the
// order of preference for one suffix: gpu_metrics_ before power_audit_
// (the dedicated metrics artifact wins over the audit bundle), and the
// AgentX raw sibling last (docs/formats.md, "Telemetry: GPU metrics and
// power").
var telemetryPrefixes = []struct {
	kind   runstate.Kind
	prefix string
}{{runstate.KindGPUMetrics, "gpu_metrics_"}, {runstate.KindPowerAudit, "power_audit_"}, {runstate.KindAgenticRaw, "agentic_"}}

// telemetrySources picks, for every suffix, the artifact its telemetry is
// read from, by name: gpu_metrics_<suffix>, else power_audit_<suffix>, else
// the AgentX raw sibling agentic_<suffix>. Sources come out in suffix
// order; nothing is opened here.
func telemetrySources(env *runstate.Env) []*telemetrySource {
	chosen := map[string]*telemetrySource{}
	for _, p := range telemetryPrefixes {
		for _, a := range env.Plan.Artifacts(p.kind) {
			suffix := strings.TrimPrefix(a.Name, p.prefix)
			if _, ok := chosen[suffix]; !ok {
				chosen[suffix] = &telemetrySource{artifact: a, kind: p.kind, suffix: suffix}
			}
		}
	}
	out := make([]*telemetrySource, 0, len(chosen))
	for _, s := range chosen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].suffix < out[j].suffix })
	return out
}

// telemetryFile is one telemetry file of an artifact.
type telemetryFile struct {
	path string
	dcgm bool
}

// telemetryFiles lists an artifact's telemetry CSVs: every file whose base
// name starts with gpu_metrics and ends with .csv, except the identity and
// energy sidecars, which are not time series; without any, the DCGM
// samples of a multinode power bundle (docs/formats.md, "Telemetry: GPU
// metrics and power").
func telemetryFiles(a *source.Artifact) []telemetryFile {
	var out []telemetryFile
	for _, f := range a.Files {
		base := strings.ToLower(path.Base(f))
		if strings.HasPrefix(base, "gpu_metrics") && strings.HasSuffix(base, ".csv") &&
			!strings.Contains(base, "_identity") && !strings.Contains(base, "_energy_") {
			out = append(out, telemetryFile{path: f})
		}
	}
	if len(out) == 0 {
		for _, f := range a.Files {
			if f == dcgmSamplesPath {
				out = append(out, telemetryFile{path: f, dcgm: true})
			}
		}
	}
	return out
}

// concDir is N for a file under conc_<N>/ (multinode AgentX), else 0.
func concDir(file string) int32 {
	first, _, ok := strings.Cut(file, "/")
	if !ok || !strings.HasPrefix(first, "conc_") {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimPrefix(first, "conc_"))
	if err != nil || n <= 0 {
		return 0
	}
	return int32(n)
}

// maxSidecarBytes bounds the small JSON/text sidecars read whole.
const maxSidecarBytes = 1 << 20

func readSmall(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxSidecarBytes))
}

func hasFile(a *source.Artifact, name string) bool {
	i := sort.SearchStrings(a.Files, name)
	return i < len(a.Files) && a.Files[i] == name
}

// timeZoneSidecar finds the collector's UTC offset for a CSV: the first
// valid gpu_metrics_context.json / <result>_gpu_metrics_context.json
// beside it (sorted by name), else AgentX's
// agentic_power_timezone_offset.txt. It returns the file it used.
func timeZoneSidecar(a *source.Artifact, fsys fs.FS, csv string) (time.Duration, string, []byte) {
	dir := path.Dir(csv)
	for _, f := range a.Files {
		if path.Dir(f) != dir || !strings.HasSuffix(strings.ToLower(path.Base(f)), "gpu_metrics_context.json") {
			continue
		}
		b, err := readSmall(fsys, f)
		if err != nil {
			continue
		}
		var ctx struct {
			TZ *string `json:"timestamp_timezone"`
		}
		if strictjson.Check(b) != nil || json.Unmarshal(b, &ctx) != nil || ctx.TZ == nil {
			continue
		}
		off, _ := tel.ParseUTCOffset(*ctx.TZ) // anything else is UTC
		return off, f, b
	}
	tz := path.Join(dir, "agentic_power_timezone_offset.txt")
	if hasFile(a, tz) {
		if b, err := readSmall(fsys, tz); err == nil {
			if off, ok := tel.ParseUTCOffset(string(b)); ok {
				return off, tz, b
			}
		}
	}
	return 0, "", nil
}

// validationWindow reads the benchmark window of the power validation
// document beside a CSV (power_validation*.json in its directory).
func validationWindow(a *source.Artifact, fsys fs.FS, csv string) *tel.Window {
	dir := path.Dir(csv)
	for _, f := range a.Files {
		base := path.Base(f)
		if path.Dir(f) != dir || !strings.HasPrefix(base, "power_validation") || !strings.HasSuffix(base, ".json") {
			continue
		}
		b, err := readSmall(fsys, f)
		if err != nil {
			continue
		}
		var doc struct {
			Window struct {
				Start *float64 `json:"start_time_unix"`
				End   *float64 `json:"end_time_unix"`
			} `json:"benchmark_window"`
		}
		if strictjson.Check(b) != nil || json.Unmarshal(b, &doc) != nil || doc.Window.Start == nil || doc.Window.End == nil || *doc.Window.End <= *doc.Window.Start {
			continue
		}
		return &tel.Window{Start: secondsToMicros(*doc.Window.Start), End: secondsToMicros(*doc.Window.End), Source: f}
	}
	return nil
}

func secondsToMicros(s float64) int64 { return int64(s*1e6 + 0.5) }

// amdEnergyDelta is Σ over GPUs of end − start of AMD's cumulative energy
// counters (gpu_metrics_energy_start.csv / _end.csv beside the CSV), in J.
func amdEnergyDelta(a *source.Artifact, fsys fs.FS, csv string) (float64, bool) {
	dir := path.Dir(csv)
	read := func(name string) map[string]float64 {
		p := path.Join(dir, name)
		if !hasFile(a, p) {
			return nil
		}
		b, err := readSmall(fsys, p)
		if err != nil {
			return nil
		}
		out := map[string]float64{}
		for i, line := range strings.Split(strings.ReplaceAll(string(b), "\r", ""), "\n") {
			cells := strings.Split(line, ",")
			if i == 0 || len(cells) < 2 {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(cells[1]), 64)
			if err == nil {
				out[strings.TrimSpace(cells[0])] = v
			}
		}
		return out
	}
	start, end := read("gpu_metrics_energy_start.csv"), read("gpu_metrics_energy_end.csv")
	if len(start) == 0 || len(end) == 0 {
		return 0, false
	}
	var sum float64
	n := 0
	for _, g := range slices.Sorted(maps.Keys(start)) { // GPU order: a float sum must not depend on map order
		s := start[g]
		if e, ok := end[g]; ok && e >= s {
			sum += e - s
			n++
		}
	}
	return sum, n > 0
}
