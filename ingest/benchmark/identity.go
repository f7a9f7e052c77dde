package benchmark

import (
	"github.com/inferencex/ingest/ingest/catalog"
	"math"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// identity is the point identity a row names besides its config.
type identity struct {
	agentic       bool
	benchmarkType string
	isl, osl      *int
	conc          int
}

// isAgentic reports whether the row is an AgentX (agentic-traces) row.
func isAgentic(row map[string]any) bool {
	s, _ := row["scenario_type"].(string)
	return strings.HasPrefix(s, "agentic")
}

// readIdentity validates conc (users for agentic rows) and, for single-turn
// rows, isl and osl. An invalid value fails the row; a missing isl or osl
// skips it, since the point cannot be named.
func readIdentity(row map[string]any) (identity, *Outcome) {
	id := identity{agentic: isAgentic(row), benchmarkType: schema.BenchmarkSingleTurn}
	concKey := "conc"
	if id.agentic {
		id.benchmarkType = schema.BenchmarkAgenticTraces
		if present(row, "users") {
			concKey = "users"
		}
	}
	if !present(row, concKey) {
		o := failed("%s: missing", concKey)
		return id, &o
	}
	conc, o := positiveInt(concKey, row[concKey])
	if o != nil {
		return id, o
	}
	id.conc = conc
	if id.agentic {
		return id, nil
	}

	missing := false
	for _, key := range []string{"isl", "osl"} {
		if !present(row, key) {
			missing = true
			continue
		}
		v, o := positiveInt(key, row[key])
		if o != nil {
			return id, o
		}
		if key == "isl" {
			id.isl = &v
		} else {
			id.osl = &v
		}
	}
	if missing {
		o := skipped(SkipMissingIdentity)
		return id, &o
	}
	return id, nil
}

// positiveInt reads an identity integer: an integral JSON number or a
// plain decimal string (catalog.IdentityInt); " 16", "16.0" or 16.5 fail
// the row rather than being read as 16.
func positiveInt(key string, v any) (int, *Outcome) {
	n, ok := catalog.IdentityInt(v)
	if !ok || n <= 0 {
		o := failed("%s: %s is not a positive integer", key, catalog.DescribeValue(v))
		return 0, &o
	}
	if n > math.MaxInt32 {
		o := failed("%s: %s is out of range", key, catalog.DescribeValue(v))
		return 0, &o
	}
	return int(n), nil
}

// isFailedOutcome reports the producer's failed-run marker: an explicit
// benchmark_outcome.status of "failed".
func isFailedOutcome(row map[string]any) bool {
	bo, ok := object(row["benchmark_outcome"])
	if !ok {
		return false
	}
	s, _ := bo["status"].(string)
	return strings.EqualFold(strings.TrimSpace(s), "failed")
}

// noSuccessfulRequests reports a dataless retry or aggregate copy:
// num_requests_successful is the number 0 and num_requests_total is a
// number (any value, 0 included).
func noSuccessfulRequests(row map[string]any) bool {
	succeeded, isNum := jsonNumber(row["num_requests_successful"])
	if !isNum || succeeded != 0 {
		return false
	}
	_, isNum = jsonNumber(row["num_requests_total"])
	return isNum
}
