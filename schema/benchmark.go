package schema

import "encoding/json"

// Benchmark types.
const (
	BenchmarkSingleTurn    = "single_turn"
	BenchmarkAgenticTraces = "agentic_traces"
)

// Config is the normalized deployment identity: the 17 columns of the
// configs natural key.
type Config struct {
	Hardware           string `json:"hardware"`
	Framework          string `json:"framework"`
	Model              string `json:"model"`
	Precision          string `json:"precision"`
	SpecMethod         string `json:"spec_method"`
	Disagg             bool   `json:"disagg"`
	IsMultinode        bool   `json:"is_multinode"`
	PrefillTP          int    `json:"prefill_tp"`
	PrefillEP          int    `json:"prefill_ep"`
	PrefillDPAttention bool   `json:"prefill_dp_attention"`
	PrefillNumWorkers  int    `json:"prefill_num_workers"`
	DecodeTP           int    `json:"decode_tp"`
	DecodeEP           int    `json:"decode_ep"`
	DecodeDPAttention  bool   `json:"decode_dp_attention"`
	DecodeNumWorkers   int    `json:"decode_num_workers"`
	NumPrefillGPU      int    `json:"num_prefill_gpu"`
	NumDecodeGPU       int    `json:"num_decode_gpu"`
}

// BenchmarkPoint is one normalized benchmark row, ready to store. Its point
// identity within a run is (Config, BenchmarkType, ISL, OSL, Conc,
// OffloadMode, RecipeFingerprint).
type BenchmarkPoint struct {
	Config            Config  `json:"config"`
	BenchmarkType     string  `json:"benchmark_type"`
	ISL               *int    `json:"isl"`
	OSL               *int    `json:"osl"`
	Conc              int     `json:"conc"`
	OffloadMode       string  `json:"offload_mode"`
	RecipeFingerprint *string `json:"recipe_fingerprint"`
	Image             *string `json:"image"`
	// KVTransferLib is the KV-cache transfer library a disaggregated point
	// names (lower case): a value of the row, not part of its identity.
	KVTransferLib *string `json:"kv_transfer_lib,omitempty"`
	// Metrics holds numeric metrics (float64) and a few runtime metadata
	// strings (router_name, kv_offloading, …).
	Metrics             map[string]any  `json:"metrics"`
	Workers             json.RawMessage `json:"workers,omitempty"`
	PowerInvalidReasons json.RawMessage `json:"power_invalid_reasons,omitempty"`
	PowerAudit          json.RawMessage `json:"power_audit,omitempty"`
	// DatasetSlug is the AgentX dataset the point replayed, when known.
	DatasetSlug string `json:"dataset_slug,omitempty"`
}

// Provenance names where a row came from.
type Provenance struct {
	Artifact   string `json:"artifact"`
	ArtifactID int64  `json:"artifact_id,omitempty"`
	File       string `json:"file"`
	// Row is the 0-based index of the row in its file.
	Row int `json:"row"`
}
