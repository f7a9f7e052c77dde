package benchmark

import (
	"encoding/json"

	"github.com/inferencex/ingest/schema"
)

// worker is one entry of the per-worker power breakdown of multinode rows.
type worker struct {
	Role         string   `json:"role"`
	WorkerIdx    int64    `json:"worker_idx"`
	Hosts        []string `json:"hosts,omitempty"`
	NumGPUs      int64    `json:"num_gpus"`
	AvgPowerW    float64  `json:"avg_power_w"`
	AvgTempC     *float64 `json:"avg_temp_c,omitempty"`
	PeakTempC    *float64 `json:"peak_temp_c,omitempty"`
	AvgUtilPct   *float64 `json:"avg_util_pct,omitempty"`
	AvgMemUsedMB *float64 `json:"avg_mem_used_mb,omitempty"`
}

// extractWorkers keeps the well-formed entries of a workers array: a
// non-empty string role, non-negative integer worker_idx and num_gpus
// (numeric strings accepted) and an avg_power_w; hosts only when all
// strings; optional telemetry only when numeric. Nothing left means nil.
// A kept entry's measured value that is no measurement (quantityFault:
// not finite, or negative where its quantity cannot be, as for the row's
// metrics) fails the row, naming the entry and key.
func extractWorkers(v any) (json.RawMessage, *Outcome) {
	arr, ok := v.([]any)
	if !ok {
		return nil, nil
	}
	var out []worker
	for i, e := range arr {
		m, ok := object(e)
		if !ok {
			continue
		}
		role, okRole := nonEmptyString(m["role"])
		idx, okIdx := integerValue(m["worker_idx"])
		gpus, okGPUs := integerValue(m["num_gpus"])
		if !okRole || !okIdx || idx < 0 || !okGPUs || gpus < 0 {
			continue
		}
		for _, k := range [...]string{"avg_power_w", "avg_temp_c", "peak_temp_c", "avg_util_pct", "avg_mem_used_mb"} {
			if f, ok := numericValue(m[k]); ok {
				if fault := quantityFault(k, f); fault != "" {
					o := failed("workers[%d].%s: %s", i, k, fault)
					return nil, &o
				}
			}
		}
		power, okPower := finiteNumber(m["avg_power_w"])
		if !okPower {
			continue
		}
		w := worker{Role: role, WorkerIdx: idx, NumGPUs: gpus, AvgPowerW: power, Hosts: allStrings(m["hosts"])}
		w.AvgTempC = optionalFinite(m["avg_temp_c"])
		w.PeakTempC = optionalFinite(m["peak_temp_c"])
		w.AvgUtilPct = optionalFinite(m["avg_util_pct"])
		w.AvgMemUsedMB = optionalFinite(m["avg_mem_used_mb"])
		out = append(out, w)
	}
	return marshalNonEmpty(out, len(out)), nil
}

func finiteNumber(v any) (float64, bool) {
	f, ok := numericValue(v)
	return f, ok && schema.Finite(f)
}

func optionalFinite(v any) *float64 {
	if f, ok := finiteNumber(v); ok {
		return &f
	}
	return nil
}

func allStrings(v any) []string {
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// marshalNonEmpty encodes v unless it holds nothing (n == 0).
func marshalNonEmpty(v any, n int) json.RawMessage {
	if n == 0 {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		// Only finite floats, strings and ints reach here, which always encode.
		return nil
	}
	return b
}
