// Package catalog holds the reference data that operators extend: model,
// hardware, framework, precision and speculative-decoding vocabularies with
// their aliases, and the known metric keys. The data lives in catalog.json
// (embedded); operators add entries with extension files of the same shape,
// so a new GPU is a one-line change and no code needs to move.
//
// The file is one JSON object; every key is optional in an extension:
//
//	models                          model key -> display name
//	model_prefix_aliases            infmax_model_prefix alias -> model key
//	model_prefix_precision_suffixes suffixes stripped from prefixes ("dsr1-fp4" -> "dsr1")
//	model_ids                       exact model id (HF id, path, served alias) -> model key
//	gpus                            GPU key -> vendor
//	frameworks                      canonical framework names
//	framework_aliases               raw name -> {"canonical": name, "disagg": bool (optional)}
//	precisions, precision_aliases   canonical precisions; alias -> precision
//	spec_methods, spec_method_aliases
//	metric_keys, power_metric_keys  known metric keys (unknown numeric keys are still stored, and reported)
//	measured_power_keys             power numbers withheld unless power_valid is 1
//	cpu_power_keys                  the CPU-side subset: stored with their own verdict (cpu_power_valid), never retired with GPU power
//	non_metric_keys                 row keys that are never metrics
//
// Keys and aliases are lower-case (matching is case-insensitive) except
// model_ids, which match exactly. A Catalog is immutable once loaded and
// safe for concurrent use.
package catalog

import (
	_ "embed"
	"fmt"
	"io"
	"iter"
	"slices"
	"sort"
)

//go:embed catalog.json
var embedded []byte

// Catalog resolves raw artifact vocabulary to canonical keys.
type Catalog struct {
	models           map[string]string // model key -> display name
	prefixAliases    map[string]string // lower-case prefix -> model key
	prefixSuffixes   []string          // precision suffixes stripped from prefixes
	modelIDs         map[string]string // exact model id -> model key
	gpus             map[string]string // GPU key -> vendor
	frameworks       map[string]bool
	frameworkAliases map[string]FrameworkAlias
	precisions       map[string]bool
	precisionAliases map[string]string
	specMethods      map[string]bool
	specAliases      map[string]string
	metricKeys       map[string]bool // every known metric key, power included
	nonMetricKeys    map[string]bool
	measuredPower    []string // in file order
	gpuPower         []string // the GPU watts and energy of measuredPower, in file order
}

// FrameworkAlias rewrites a raw framework name. Disagg, when set, forces the
// disaggregation flag of every row that uses the alias.
type FrameworkAlias struct {
	Canonical string `json:"canonical"`
	Disagg    *bool  `json:"disagg,omitempty"`
}

// Default returns the catalog of the embedded data file.
func Default() (*Catalog, error) {
	return Load()
}

// Load returns the embedded catalog merged with operator extension files.
// Each extension has the JSON shape of catalog.json; every top-level key is
// optional. Map entries are added or replace the embedded ones, list entries
// are added. An unknown key is an error that names it.
func Load(extensions ...io.Reader) (*Catalog, error) {
	base, err := decodeFile(embedded)
	if err != nil {
		return nil, fmt.Errorf("embedded catalog: %w", err)
	}
	for i, r := range extensions {
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("catalog extension %d: %w", i+1, err)
		}
		ext, err := decodeFile(data)
		if err != nil {
			return nil, fmt.Errorf("catalog extension %d: %w", i+1, err)
		}
		base.merge(ext)
	}
	c, err := build(base)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	return c, nil
}

// ModelDisplayName returns the display name of a model key.
func (c *Catalog) ModelDisplayName(key string) (string, bool) {
	name, ok := c.models[key]
	return name, ok
}

// GPUKeys returns every GPU key, sorted.
func (c *Catalog) GPUKeys() []string {
	keys := make([]string, 0, len(c.gpus))
	for k := range c.gpus {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// IsKnownMetric reports whether key is a metric the catalog knows (the
// throughput/latency keys and every power key).
func (c *Catalog) IsKnownMetric(key string) bool { return c.metricKeys[key] }

// IsNonMetricKey reports whether key is an identity, routing or structured
// field that must never be stored as a metric.
func (c *Catalog) IsNonMetricKey(key string) bool { return c.nonMetricKeys[key] }

// GPUPowerKeys are the measured GPU power and energy keys (watts, joules,
// joules per item; not the CPU-side ones, temperatures or utilization), in
// catalog order: what a retired power source takes from a point.
func (c *Catalog) GPUPowerKeys() []string { return slices.Clone(c.gpuPower) }

// WithheldPowerKeys yields the measured power keys a row's power verdict
// withholds: every one when it is not valid, else none, in catalog order.
// The CPU-side keys carry their own verdict (cpu_power_valid), stored
// beside them for readers to judge, as production stores them.
func (c *Catalog) WithheldPowerKeys(powerInvalid bool) iter.Seq[string] {
	if !powerInvalid {
		return slices.Values([]string(nil))
	}
	return slices.Values(c.measuredPower)
}
