package benchmark

import (
	"strings"

	"github.com/inferencex/ingest/ingest/catalog"
)

// The power contract is fail-closed: a measured power number is only kept
// when the producer said the measurement is valid.

// applyPowerContract normalises the verdict keys from the raw row and
// withholds measured keys that are not covered by a valid verdict:
//   - power_valid becomes 1 for 1 or "1", 0 for anything else present, and
//     is removed when absent (cpu_power_valid likewise);
//   - power_metric_schema_version is kept only as a positive integer;
//   - power_valid 0 withholds every measured key (and the workers, which
//     the return value reports);
//   - CPU-side keys are kept whatever cpu_power_valid says: it is their
//     own verdict, stored beside them for readers (the reference stores
//     them so and its readers check cpu_power_valid).
//
// Withheld keys no longer count as non-finite.
func applyPowerContract(cat *catalog.Catalog, row map[string]any, c *capturedMetrics) (withholdWorkers bool) {
	m := c.values
	for _, key := range []string{"power_valid", "cpu_power_valid"} {
		delete(c.nonFinite, key)
		delete(c.wrongType, key)
		raw, ok := row[key]
		if !ok {
			delete(m, key)
			continue
		}
		m[key] = float64(0)
		if isOne(raw) {
			m[key] = float64(1)
		}
	}
	delete(c.nonFinite, "power_metric_schema_version")
	delete(c.wrongType, "power_metric_schema_version")
	delete(m, "power_metric_schema_version")
	if v, ok := schemaVersion(row["power_metric_schema_version"]); ok {
		m["power_metric_schema_version"] = v
	}

	powerInvalid := m["power_valid"] == float64(0)
	for key := range cat.WithheldPowerKeys(powerInvalid) {
		delete(m, key)
		delete(c.nonFinite, key)
		delete(c.wrongType, key)
	}
	return powerInvalid
}

func isOne(v any) bool {
	if f, ok := jsonNumber(v); ok {
		return f == 1
	}
	s, ok := v.(string)
	return ok && strings.TrimSpace(s) == "1"
}

// schemaVersion accepts a positive integer number or a canonical decimal
// string ("2", not "02" or "2.0").
func schemaVersion(v any) (float64, bool) {
	if f, ok := jsonNumber(v); ok {
		n, isInt := integerValue(v)
		return f, isInt && n > 0
	}
	s, ok := v.(string)
	if !ok || s == "" || s[0] < '1' || s[0] > '9' || !allDigits(s) {
		return 0, false
	}
	n, ok := integerValue(s)
	return float64(n), ok
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
