package telemetry

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/strictjson"
	tel "github.com/inferencex/ingest/ingest/telemetry"
)

// sidecars is what a series' sidecars document (gpu_metric_series.sidecars)
// holds besides the artifact's series inventory, built as the reference
// ingest builds it (docs/schema.md, "gpu_metric_series.sidecars"): JSON
// values decoded as JavaScript would (numbers as float64).
type sidecars struct {
	context     any // an object, or nil
	identity    any // gpu_metrics_identity.json, or the rows of the .csv; nil
	energyStart map[string]float64
	energyEnd   map[string]float64
	// validations and powerManifest belong to a power_audit_ artifact
	auditBundle   bool
	validations   map[string]any
	powerManifest any
	// dcgm: a multinode bundle's host series (context is its manifest,
	// identity comes from the samples)
	dcgm bool
}

// dcgmManifestPath is the producer manifest beside a bundle's samples.
const dcgmManifestPath = "LOGS/power/manifest.json"

// readSidecars reads the sidecars of one telemetry file.
func readSidecars(a *source.Artifact, fsys fs.FS, file telemetryFile, kind bool) *sidecars {
	sc := &sidecars{auditBundle: kind}
	if kind {
		sc.validations = auditValidations(a, fsys)
	}
	if file.dcgm {
		sc.dcgm = true
		sc.context = jsonObject(fsys, path.Join(path.Dir(file.path), "manifest.json"))
		return sc
	}
	dir := path.Dir(file.path)
	for _, f := range a.Files { // sorted: the first valid context file
		base := path.Base(f)
		if path.Dir(f) != dir || !strings.HasSuffix(strings.ToLower(base), "_context.json") || !strings.Contains(base, "gpu_metrics") {
			continue
		}
		if obj := jsonObject(fsys, f); obj != nil {
			sc.context = obj
			break
		}
	}
	sc.identity = readIdentity(a, fsys, dir)
	sc.energyStart = energyCounters(a, fsys, path.Join(dir, "gpu_metrics_energy_start.csv"))
	sc.energyEnd = energyCounters(a, fsys, path.Join(dir, "gpu_metrics_energy_end.csv"))
	if kind && hasFile(a, dcgmSamplesPath) {
		sc.powerManifest = jsonObject(fsys, dcgmManifestPath)
	}
	return sc
}

// document is the sidecars JSON of one series: identity given for a DCGM
// host series, inventory the artifact's series and their sample counts.
func (sc *sidecars) document(identity any, inventory []any) ([]byte, error) {
	doc := map[string]any{
		"context":     sc.context,
		"identity":    sc.identity,
		"energyStart": nilIfEmpty(sc.energyStart),
		"energyEnd":   nilIfEmpty(sc.energyEnd),
	}
	if sc.dcgm {
		doc["identity"] = identity
		doc["energyStart"], doc["energyEnd"] = nil, nil
	}
	if sc.auditBundle {
		doc["validations"] = sc.validations
		if !sc.dcgm {
			doc["powerManifest"] = sc.powerManifest
		}
	}
	if inventory != nil {
		doc["seriesInventory"] = inventory
	}
	return json.Marshal(doc)
}

func nilIfEmpty(m map[string]float64) any {
	if len(m) == 0 {
		return nil
	}
	return m
}

// hostIdentity is a DCGM host series' identity: its GPUs' UUIDs in GPU
// order.
func hostIdentity(host string, uuids map[int16]string) []any {
	gpus := slices.Sorted(maps.Keys(uuids))
	out := make([]any, 0, len(gpus))
	for _, g := range gpus {
		out = append(out, map[string]any{"hostname": host, "gpu_index": int(g), "gpu_uuid": uuids[g]})
	}
	return out
}

// jsonObject reads a JSON object file; nil when absent, unreadable,
// malformed or not an object.
func jsonObject(fsys fs.FS, name string) map[string]any {
	v := jsonFile(fsys, name)
	obj, _ := v.(map[string]any)
	return obj
}

func jsonFile(fsys fs.FS, name string) any {
	b, err := readSmall(fsys, name)
	if err != nil || strictjson.Check(b) != nil {
		return nil
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	return v
}

// validationName is a window validation document at a power bundle's root.
var validationName = regexp.MustCompile(`^power_validation_[^/]+\.json$`)

// auditValidations are the power_validation_*.json objects at a power
// bundle's root, by file name.
func auditValidations(a *source.Artifact, fsys fs.FS) map[string]any {
	out := map[string]any{}
	for _, f := range a.Files {
		if !validationName.MatchString(f) {
			continue
		}
		if obj := jsonObject(fsys, f); obj != nil {
			out[f] = obj
		}
	}
	return out
}

// readIdentity is gpu_metrics_identity.json beside the CSV when it parses,
// else the rows of gpu_metrics_identity.csv as objects keyed by its header
// (every value a string), else nil.
func readIdentity(a *source.Artifact, fsys fs.FS, dir string) any {
	if p := path.Join(dir, "gpu_metrics_identity.json"); hasFile(a, p) {
		if v := jsonFile(fsys, p); v != nil {
			return v
		}
	}
	lines := csvLines(a, fsys, path.Join(dir, "gpu_metrics_identity.csv"))
	if lines == nil {
		return nil
	}
	header := strings.Split(lines[0], ",")
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
	}
	rows := make([]any, 0, len(lines)-1)
	for _, line := range lines[1:] {
		cells := strings.Split(line, ",")
		row := map[string]any{}
		for i, k := range header {
			v := ""
			if i < len(cells) {
				v = strings.TrimSpace(cells[i])
			}
			row[k] = v
		}
		rows = append(rows, row)
	}
	return rows
}

// energyCounters reads a gpu,total_energy_consumption CSV into GPU →
// joules; nil when absent or without a readable row.
func energyCounters(a *source.Artifact, fsys fs.FS, p string) map[string]float64 {
	lines := csvLines(a, fsys, p)
	if lines == nil {
		return nil
	}
	out := map[string]float64{}
	for _, line := range lines[1:] {
		gpu, value, _ := strings.Cut(line, ",")
		value, _, _ = strings.Cut(value, ",")
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if gpu != "" && err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
			out[strings.TrimSpace(gpu)] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// csvLines are the trimmed non-blank lines of the small CSV p of a; nil
// when it is absent, unreadable or holds no line below its header.
func csvLines(a *source.Artifact, fsys fs.FS, p string) []string {
	if !hasFile(a, p) {
		return nil
	}
	b, err := readSmall(fsys, p)
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) <= 1 {
		return nil
	}
	return out
}

// AMD Device Metrics Exporter: the power metric and scope its bundles name.
const (
	dmePowerMetric  = "gpu_power_usage"
	dmePowerScope   = "gpu_device_power_as_reported_by_amd_device_metrics_exporter"
	dmePowerProfile = "amd-device-metrics"
)

// amdTool: a producer or source metric naming AMD tooling (amd-smi,
// rocm_smi, …).
var amdTool = regexp.MustCompile(`\b(?:amd|rocm)`)

// bundleVendor is the vendor of a multinode power bundle's GPUs, from its
// manifest (docs/formats.md, "Telemetry: GPU metrics and power"): AMD for
// the AMD Device Metrics Exporter (source_metric gpu_power_usage or its
// power_scope; older bundles power_profile amd-device-metrics) and for a
// producer or source metric naming AMD tooling; NVIDIA (DCGM) otherwise,
// and without a manifest.
func bundleVendor(manifest any) tel.Vendor {
	m, _ := manifest.(map[string]any)
	str := func(k string) string { s, _ := m[k].(string); return s }
	if str("power_profile") == dmePowerProfile || str("power_scope") == dmePowerScope || str("source_metric") == dmePowerMetric {
		return tel.VendorAMD
	}
	if amdTool.MatchString(strings.ToLower(strings.TrimSpace(str("source_metric") + " " + str("producer")))) {
		return tel.VendorAMD
	}
	return tel.VendorNVIDIA
}

// rowSidecars is what a new series row's sidecars document is built from.
type rowSidecars struct {
	side     *sidecars
	identity []any
}

// finishSidecars writes every new series' sidecars document, with the
// series inventory of its artifact: the file name and sample count of each
// series the artifact holds (new ones and those stored unchanged), in file
// order.
func (st *telemetryStage) finishSidecars() error {
	type entry struct {
		file    string
		samples int64
	}
	inv := map[string][]entry{}
	for _, r := range st.rows {
		inv[r.Artifact] = append(inv[r.Artifact], entry{r.File, r.Facts.Samples})
	}
	docs := map[string][]any{}
	for i := range st.rows {
		r := &st.rows[i]
		list, ok := docs[r.Artifact]
		if !ok {
			es := inv[r.Artifact]
			for _, s := range st.unchangedSeries[r.Artifact] {
				es = append(es, entry{s.File, s.Samples})
			}
			slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.file, b.file) })
			list = make([]any, 0, len(es))
			for _, e := range es {
				list = append(list, map[string]any{"fileName": e.file, "sampleCount": e.samples})
			}
			docs[r.Artifact] = list
		}
		rs := st.rowSide[i]
		if rs.side == nil {
			continue
		}
		var identity any
		if rs.identity != nil {
			identity = rs.identity
		}
		doc, err := rs.side.document(identity, list)
		if err != nil {
			return fmt.Errorf("artifact %s: file %s: sidecars: %w", r.Artifact, r.File, err)
		}
		r.Sidecars = doc
	}
	return nil
}
