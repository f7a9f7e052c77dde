package store

import (
	"math"

	"github.com/inferencex/ingest/schema"
)

// impactMetrics are the five metrics latest_benchmark_points keeps of a
// shown row (migration 000021), in the column order of the SQL function
// benchmark_impact_values: schema.PointValues' keys.
var impactMetrics = [5]string(schema.PointValueMetrics())

// impactValues reads, from the metrics a row is written with, the five
// values benchmark_impact_values would read from the stored jsonb: a
// finite float64 is the number the document holds (the encoder writes its
// shortest form, which PostgreSQL's numeric reads back to the same float8;
// its zero has no sign); a string, a boolean, null, NaN or infinity (both
// written as null), an object or an array is no value. Any other Go type
// (an integer, a json.Number) is not decided here: known is false and the
// update reads the row's jsonb as it always could. The values are nil or
// float64, ready for COPY.
func impactValues(m map[string]any) (vals [5]any, known bool) {
	for i, name := range impactMetrics {
		switch v := m[name].(type) {
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue // NaN and infinities are written as null
			}
			if v == 0 {
				v = 0 // numeric has no negative zero
			}
			vals[i] = v
		case nil, string, bool, map[string]any, []any:
		default:
			return [5]any{}, false
		}
	}
	return vals, true
}
