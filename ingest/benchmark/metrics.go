package benchmark

import (
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/schema"
)

// capturedMetrics is the numeric content of a row.
type capturedMetrics struct {
	values map[string]any // float64 values, keyed as in the row
	// nonFinite lists known metric keys whose value is NaN or ±Inf.
	nonFinite map[string]bool
	// wrongType maps known metric keys whose value is text that is not a
	// number, an array or an object to that value as JSON: such a row is
	// not stored without the metric it publishes.
	wrongType map[string]string
}

// captureMetrics keeps every numeric value of a row outside the catalog's
// non-metric keys: JSON numbers and numeric strings, finite only. A
// non-finite value is dropped; when its key is a known metric it is also
// remembered, because it makes the row fail unless the power contract
// withholds the key anyway. Booleans, null, empty strings, arrays and
// objects are never metrics; when a known metric holds non-numeric text,
// an array or an object, that is remembered too and fails the row.
// Booleans and null stay "no value" (power_valid is a boolean in real
// artifacts, and the power contract reads it from the row itself).
func captureMetrics(cat *catalog.Catalog, row map[string]any, values map[string]any) capturedMetrics {
	if values == nil {
		values = make(map[string]any, len(row))
	}
	c := capturedMetrics{values: values}
	for key, raw := range row {
		if cat.IsNonMetricKey(key) {
			continue
		}
		f, ok := numericValue(raw)
		if !ok {
			if cat.IsKnownMetric(key) && notANumber(raw) {
				b, _ := json.Marshal(raw)
				if c.wrongType == nil {
					c.wrongType = map[string]string{}
				}
				c.wrongType[key] = string(b)
			}
			continue
		}
		if !schema.Finite(f) {
			if cat.IsKnownMetric(key) {
				if c.nonFinite == nil {
					c.nonFinite = map[string]bool{}
				}
				c.nonFinite[key] = true
			}
			continue
		}
		if _, boxed := raw.(float64); boxed {
			c.values[key] = raw // the same float64, already boxed
		} else {
			c.values[key] = f
		}
	}
	return c
}

// mayBeNegative says whether the quantity a metric key names can be below
// zero. Every measured quantity — latencies, throughputs, interactivity,
// token counts, rates, power, energy, utilisation, memory — cannot, except
// the Celsius temperatures.
func mayBeNegative(key string) bool { return strings.HasSuffix(key, "_temp_c") }

// quantityFault says why f is no measurement of the quantity key names:
// it is not finite, or it is below zero where the quantity cannot be
// (mayBeNegative). "" when f is a value.
func quantityFault(key string, f float64) string {
	switch {
	case !schema.Finite(f):
		return "non-finite value"
	case f < 0 && !mayBeNegative(key):
		return "negative value " + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return ""
}

// firstNegative returns the first (sorted) known metric holding a value
// below zero that its quantity cannot take (mayBeNegative), and that
// value. A key the power contract withheld is no longer among the values.
func (c capturedMetrics) firstNegative(cat *catalog.Catalog) (string, float64, bool) {
	key, value, found := "", 0.0, false
	for k, v := range c.values {
		f, ok := v.(float64)
		if !ok || f >= 0 || mayBeNegative(k) || !cat.IsKnownMetric(k) {
			continue
		}
		if !found || k < key {
			key, value, found = k, f, true
		}
	}
	return key, value, found
}

// firstNonFinite returns the first (sorted) known key still non-finite.
func (c capturedMetrics) firstNonFinite() (string, bool) {
	if len(c.nonFinite) == 0 {
		return "", false
	}
	keys := slices.Sorted(maps.Keys(c.nonFinite))
	return keys[0], true
}

// notANumber reports whether a value that is not numeric still holds
// something: non-blank text, an array or an object.
func notANumber(raw any) bool {
	switch v := raw.(type) {
	case string:
		return strings.TrimSpace(v) != ""
	case []any, map[string]any:
		return true
	}
	return false
}

// firstWrongType returns the first (sorted) known key still holding a value
// that is not a number, and that value as JSON.
func (c capturedMetrics) firstWrongType() (string, string, bool) {
	if len(c.wrongType) == 0 {
		return "", "", false
	}
	keys := slices.Sorted(maps.Keys(c.wrongType))
	return keys[0], c.wrongType[keys[0]], true
}

// unknownMetrics lists the numeric keys the catalog does not know, sorted.
func unknownMetrics(cat *catalog.Catalog, metrics map[string]any) []string {
	var unknown []string
	for key, v := range metrics {
		if _, numeric := v.(float64); numeric && !cat.IsKnownMetric(key) {
			unknown = append(unknown, key)
		}
	}
	sort.Strings(unknown)
	return unknown
}

// equalisePipelineParallelism gives an aggregate (not disaggregated)
// deployment one pipeline depth: prefill_pp and decode_pp both become the
// larger of the two (a missing side counts as 1).
func equalisePipelineParallelism(metrics map[string]any) {
	p, hasP := metrics["prefill_pp"].(float64)
	d, hasD := metrics["decode_pp"].(float64)
	if !hasP && !hasD {
		return
	}
	if !hasP {
		p = 1
	}
	if !hasD {
		d = 1
	}
	pp := max(p, d)
	metrics["prefill_pp"] = pp
	metrics["decode_pp"] = pp
}
