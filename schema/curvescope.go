package schema

import (
	"encoding/json"
	"fmt"
)

// CurveScope is a curve's identity: the JSON array the SQL function
// benchmark_curve_scope (migration 000013, the reference's) builds, field
// by field in this order. The Scope* constants are the positions, used by
// the store's SQL (curve_scope->>i) and by UnmarshalJSON; the store's
// tests hold the SQL function to them.
type CurveScope struct {
	Model, Hardware, Framework, Precision, BenchmarkType string
	ISL, OSL                                             *int
	// SpecMethod, Disagg and OffloadMode are "", false and "" on an
	// AgentX curve, which ignores them.
	SpecMethod  string
	Disagg      bool
	OffloadMode string
}

// The positions of CurveScope's fields in the array.
const (
	ScopeModel = iota
	ScopeHardware
	ScopeFramework
	ScopePrecision
	ScopeBenchmarkType
	ScopeISL
	ScopeOSL
	ScopeSpecMethod
	ScopeDisagg
	ScopeOffloadMode
	// ScopeFields is the length of the array.
	ScopeFields
)

// fields are s's fields at their positions.
func (s *CurveScope) fields() [ScopeFields]any {
	return [ScopeFields]any{ScopeModel: &s.Model, ScopeHardware: &s.Hardware, ScopeFramework: &s.Framework,
		ScopePrecision: &s.Precision, ScopeBenchmarkType: &s.BenchmarkType, ScopeISL: &s.ISL, ScopeOSL: &s.OSL,
		ScopeSpecMethod: &s.SpecMethod, ScopeDisagg: &s.Disagg, ScopeOffloadMode: &s.OffloadMode}
}

// UnmarshalJSON reads the array benchmark_curve_scope builds.
func (s *CurveScope) UnmarshalJSON(b []byte) error {
	var f []json.RawMessage
	if err := json.Unmarshal(b, &f); err != nil || len(f) != ScopeFields {
		return fmt.Errorf("curve scope %s: not the %d fields of benchmark_curve_scope", b, ScopeFields)
	}
	for i, dst := range s.fields() {
		if err := json.Unmarshal(f[i], dst); err != nil {
			return fmt.Errorf("curve scope %s: field %d: %w", b, i+1, err)
		}
	}
	return nil
}

// MarshalJSON writes the array benchmark_curve_scope builds.
func (s CurveScope) MarshalJSON() ([]byte, error) { return json.Marshal(s.fields()) }
