// Package benchmark reads benchmark result files (per-job bmk_* and
// aggregate results_* JSON) and normalizes their rows into
// schema.BenchmarkPoint values, saying for every row whether it is stored,
// skipped, unmapped or failed and why.
package benchmark

import (
	"sort"
	"strings"
	"sync"

	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/schema"
)

// Normalizer maps raw benchmark rows to points. It holds no mutable state
// and is safe for concurrent use.
type Normalizer struct {
	cat *catalog.Catalog
	// maps are metrics maps given back (Release), cleared, for the
	// next points: a map of a few dozen metrics is most of what a row
	// allocates.
	maps sync.Pool
}

// Release gives back the metrics map of a point that nothing uses any
// more (its row was encoded), for a later point.
func (n *Normalizer) Release(p *schema.BenchmarkPoint) {
	if p.Metrics == nil {
		return
	}
	clear(p.Metrics)
	n.maps.Put(p.Metrics)
	p.Metrics = nil
}

// NewNormalizer returns a Normalizer that resolves vocabulary through c.
func NewNormalizer(c *catalog.Catalog) *Normalizer {
	return &Normalizer{cat: c}
}

// Normalize maps one raw row (as delivered by ReadRows) to a point. The
// point is only meaningful when the outcome is OK. The row is not modified.
//
// The steps, in order: refuse a result_schema_version other than 1;
// flatten the v3 agentic layout; skip rows whose
// benchmark_outcome failed; fail rows publishing a derived_* key; validate the point identity (conc/users, isl,
// osl); skip runs without a successful request; resolve model, hardware,
// framework, precision and spec method (every unresolved one is reported);
// resolve the topology; capture and normalize the metrics (a known metric
// that is not a finite number, or is negative, fails the row).
func (n *Normalizer) Normalize(row map[string]any) (schema.BenchmarkPoint, Outcome) {
	if err := CheckResultSchemaVersion(row); err != nil {
		return schema.BenchmarkPoint{}, Outcome{Kind: Failed, Reason: err.Error(), UnsupportedSchema: true}
	}
	row = flattenV3(row)
	if isFailedOutcome(row) {
		return schema.BenchmarkPoint{}, skipped(SkipFailedRun)
	}
	if key, ok := reservedKey(row); ok {
		return schema.BenchmarkPoint{}, failed("%s: the %s prefix is reserved for metrics the ingest derives from traces", key, schema.DerivedMetricPrefix)
	}
	id, o := readIdentity(row)
	if o != nil {
		return schema.BenchmarkPoint{}, *o
	}
	if noSuccessfulRequests(row) {
		return schema.BenchmarkPoint{}, skipped(SkipFailedRun)
	}

	cfg, fwDisagg, o := n.resolveDimensions(row)
	if o != nil {
		return schema.BenchmarkPoint{}, *o
	}
	topo, err := resolveTopology(row, cfg.Framework, fwDisagg, id.agentic)
	if err != nil {
		return schema.BenchmarkPoint{}, failed("%v", err)
	}
	topo.Hardware, topo.Framework, topo.Model = cfg.Hardware, cfg.Framework, cfg.Model
	topo.Precision, topo.SpecMethod = cfg.Precision, cfg.SpecMethod

	point := schema.BenchmarkPoint{
		Config:            topo,
		BenchmarkType:     id.benchmarkType,
		ISL:               id.isl,
		OSL:               id.osl,
		Conc:              id.conc,
		OffloadMode:       offloadMode(row),
		RecipeFingerprint: recipeFingerprint(row),
		Image:             image(row),
		KVTransferLib:     kvTransferLib(row),
		DatasetSlug:       datasetSlug(row),
	}
	metrics, withholdWorkers, o := n.metrics(row, point, id.agentic)
	if o != nil {
		return schema.BenchmarkPoint{}, *o
	}
	point.Metrics = metrics
	if !withholdWorkers {
		if point.Workers, o = extractWorkers(row["workers"]); o != nil {
			return schema.BenchmarkPoint{}, *o
		}
	}
	point.PowerInvalidReasons = extractPowerInvalidReasons(row["power_invalid_reasons"])
	point.PowerAudit = extractPowerAudit(row["power_audit"])
	return point, Outcome{Kind: OK, UnknownMetrics: unknownMetrics(n.cat, metrics)}
}

// resolveDimensions resolves the five vocabulary dimensions of a config.
// fwDisagg is the disaggregation flag the framework implies.
func (n *Normalizer) resolveDimensions(row map[string]any) (cfg schema.Config, fwDisagg bool, o *Outcome) {
	var unmapped []UnmappedValue
	miss := func(kind string, raw any) {
		unmapped = append(unmapped, UnmappedValue{Kind: kind, Value: catalog.ValueText(raw)})
	}

	prefix := row["infmax_model_prefix"]
	if !present(row, "infmax_model_prefix") {
		prefix = row["model_prefix"]
	}
	model, ok := n.cat.ResolveModel(catalog.ValueText(prefix), catalog.ValueText(row["model"]))
	if !ok {
		raw := prefix
		if strings.TrimSpace(catalog.ValueText(raw)) == "" {
			raw = row["model"]
		}
		miss(DimModel, raw)
	}
	hardware, ok := n.cat.ResolveHardware(catalog.ValueText(row["hw"]))
	if !ok {
		miss(DimHardware, row["hw"])
	}
	framework, fwDisagg, known := n.cat.ResolveFramework(catalog.ValueText(row["framework"]), row["disagg"])
	if !known {
		miss(DimFramework, row["framework"])
	}
	precision, ok := n.cat.ResolvePrecision(catalog.ValueText(row["precision"]))
	if !ok {
		miss(DimPrecision, row["precision"])
	}
	spec, ok := n.cat.ResolveSpecMethod(row["spec_decoding"])
	if !ok {
		miss(DimSpecMethod, row["spec_decoding"])
	}
	if len(unmapped) > 0 {
		return cfg, false, &Outcome{Kind: Unmapped, Unmapped: unmapped}
	}
	cfg = schema.Config{Hardware: hardware, Framework: framework, Model: model, Precision: precision, SpecMethod: spec}
	return cfg, fwDisagg, nil
}

// metrics builds the metrics of an identified point.
func (n *Normalizer) metrics(row map[string]any, p schema.BenchmarkPoint, agentic bool) (map[string]any, bool, *Outcome) {
	pooled, _ := n.maps.Get().(map[string]any)
	c := captureMetrics(n.cat, row, pooled)
	withholdWorkers := applyPowerContract(n.cat, row, &c)
	if key, bad := c.firstNonFinite(); bad {
		o := failed("metric %s: non-finite value", key)
		return nil, false, &o
	}
	if key, raw, bad := c.firstWrongType(); bad {
		o := failed("metric %s: %s is not a number", key, raw)
		return nil, false, &o
	}
	if key, v, bad := c.firstNegative(n.cat); bad {
		o := failed("metric %s: %s", key, quantityFault(key, v))
		return nil, false, &o
	}
	m := c.values
	if agentic {
		preferFullResponse(m)
	}
	if !p.Config.Disagg {
		equalisePipelineParallelism(m)
	}
	if agentic {
		m["offload_mode"] = p.OffloadMode
	}
	addRuntimeMetadata(row, m)
	if agentic {
		deriveInteractivity(m)
	}
	return m, withholdWorkers, nil
}

// reservedKey returns the first (sorted) key of row with the derived_
// prefix: those names belong to values derived from traces, never to a
// published metric.
func reservedKey(row map[string]any) (string, bool) {
	var keys []string
	for k := range row {
		if strings.HasPrefix(k, schema.DerivedMetricPrefix) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "", false
	}
	sort.Strings(keys)
	return keys[0], true
}
