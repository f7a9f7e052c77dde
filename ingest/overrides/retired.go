package overrides

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/inferencex/ingest/ingest/strictjson"
	"github.com/inferencex/ingest/schema"
)

// The source policy that retires the GPU power of a few points: their
// published watts and joules came from a legacy amd-smi collector whose raw
// gpu_metrics.csv was verified to be the wrong series. The points stay; only
// their GPU power keys go, on every ingest and in data already stored.
//
//go:embed retired_gpu_power.json
var retiredEmbedded []byte

// RetiredPoint is one point whose GPU power is retired, identified exactly:
// source run, attempt and head commit, the full config and the point.
type RetiredPoint struct {
	RunID   int64  `json:"runId"`
	Attempt int    `json:"attempt"`
	HeadSHA string `json:"headSha"`
	PointFields
	// CSVSHA256 is the sha256 of the raw telemetry file the verdict rests on.
	CSVSHA256 string `json:"csvSha256"`
	Reason    string `json:"reason"`
}

func loadRetired() ([]RetiredPoint, error) {
	var f struct {
		RetiredGPUPower []RetiredPoint `json:"retiredGpuPower"`
	}
	if err := strictjson.Decode(retiredEmbedded, &f); err != nil {
		return nil, fmt.Errorf("embedded retired_gpu_power.json: %w", err)
	}
	for i, r := range f.RetiredGPUPower {
		if r.RunID <= 0 || r.Attempt <= 0 || len(r.HeadSHA) != 40 || r.Conc <= 0 || r.BenchmarkType == "" ||
			r.OffloadMode == "" || r.Config.Model == "" || r.Config.Hardware == "" || strings.TrimSpace(r.Reason) == "" {
			return nil, fmt.Errorf("embedded retired_gpu_power.json: entry %d is incomplete", i+1)
		}
	}
	return f.RetiredGPUPower, nil
}

// RetiredGPUPower returns the entries of the retirement policy.
func (o *Overrides) RetiredGPUPower() []RetiredPoint { return o.retired }

// GPUPowerRetired reports whether the point's GPU power is retired. The run
// must be the entry's; an attempt of 0 or an empty head commit means the
// caller does not know it and matches any, a known one must agree.
func (o *Overrides) GPUPowerRetired(runID int64, attempt int, headSHA string, p *schema.BenchmarkPoint) (RetiredPoint, bool) {
	var key string
	for _, r := range o.retired {
		if r.RunID != runID || (attempt != 0 && attempt != r.Attempt) || (headSHA != "" && headSHA != r.HeadSHA) {
			continue
		}
		if key == "" {
			key = p.Key()
		}
		if r.Point().Key() == key {
			return r, true
		}
	}
	return RetiredPoint{}, false
}

// StripGPUPower removes the GPU power keys (gpuKeys) from the point's
// metrics and from every worker object, and says whether anything was
// removed. Performance, CPU-side power and the power verdicts stay.
func StripGPUPower(p *schema.BenchmarkPoint, gpuKeys []string) (bool, error) {
	removed := false
	for _, k := range gpuKeys {
		if _, ok := p.Metrics[k]; ok {
			delete(p.Metrics, k)
			removed = true
		}
	}
	if len(p.Workers) == 0 {
		return removed, nil
	}
	var workers []json.RawMessage
	if err := json.Unmarshal(p.Workers, &workers); err != nil {
		return removed, nil // not an array: nothing of the policy's shape to strip
	}
	changed := false
	for i, w := range workers {
		var obj map[string]json.RawMessage
		if json.Unmarshal(w, &obj) != nil || obj == nil {
			continue
		}
		n := len(obj)
		for _, k := range gpuKeys {
			delete(obj, k)
		}
		if len(obj) == n {
			continue
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return removed, err
		}
		workers[i], changed = b, true
	}
	if !changed {
		return removed, nil
	}
	b, err := json.Marshal(workers)
	if err != nil {
		return removed, err
	}
	p.Workers = b
	return true, nil
}
