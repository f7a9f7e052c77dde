package benchmark

import (
	"encoding/json"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// Limits of power_invalid_reasons.
const (
	maxReasons   = 32
	maxReasonLen = 64
)

// extractPowerInvalidReasons keeps reason codes (^[a-z][a-z0-9_]*$, at most
// 64 characters), deduplicated, at most 32. None means nil.
func extractPowerInvalidReasons(v any) json.RawMessage {
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range arr {
		s, ok := e.(string)
		if !ok || !isReasonCode(s) || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
		if len(out) == maxReasons {
			break
		}
	}
	return marshalNonEmpty(out, len(out))
}

func isReasonCode(s string) bool {
	if s == "" || len(s) > maxReasonLen || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// powerAudit is the sanitised power-audit record of a row.
type powerAudit struct {
	Source              *string  `json:"source,omitempty"`
	WindowStartUnix     *float64 `json:"window_start_unix,omitempty"`
	WindowEndUnix       *float64 `json:"window_end_unix,omitempty"`
	ExpectedGPUCount    *int64   `json:"expected_gpu_count,omitempty"`
	ObservedGPUCount    *int64   `json:"observed_gpu_count,omitempty"`
	SampleCount         *int64   `json:"sample_count,omitempty"`
	MaxSampleGapS       *float64 `json:"max_sample_gap_s,omitempty"`
	ObservedGPUIDs      []string `json:"observed_gpu_ids,omitempty"`
	ProducerSHA         *string  `json:"producer_sha,omitempty"`
	ExporterImageSHA256 *string  `json:"exporter_image_sha256,omitempty"`
}

// Limits of power_audit fields.
const (
	maxAuditSourceLen = 512
	maxGPUIDLen       = 128
	maxGPUIDs         = 1024
	maxShaLen         = 128
)

// extractPowerAudit keeps the well-formed fields of a power_audit object;
// an object with none of them means nil.
func extractPowerAudit(v any) json.RawMessage {
	m, ok := object(v)
	if !ok {
		return nil
	}
	var a powerAudit
	fields := 0
	if s, ok := m["source"].(string); ok && isAuditSource(s) {
		a.Source = &s
		fields++
	}
	for key, dst := range map[string]**float64{
		"window_start_unix": &a.WindowStartUnix,
		"window_end_unix":   &a.WindowEndUnix,
		"max_sample_gap_s":  &a.MaxSampleGapS,
	} {
		if f, ok := jsonNumber(m[key]); ok && schema.Finite(f) {
			*dst = &f
			fields++
		}
	}
	for key, dst := range map[string]**int64{
		"expected_gpu_count": &a.ExpectedGPUCount,
		"observed_gpu_count": &a.ObservedGPUCount,
		"sample_count":       &a.SampleCount,
	} {
		if _, isNum := jsonNumber(m[key]); !isNum {
			continue
		}
		if n, ok := integerValue(m[key]); ok && n >= 0 {
			*dst = &n
			fields++
		}
	}
	if ids, ok := m["observed_gpu_ids"].([]any); ok {
		seen := map[string]bool{}
		for _, e := range ids {
			s, ok := e.(string)
			if !ok || s == "" || len(s) > maxGPUIDLen || seen[s] {
				continue
			}
			seen[s] = true
			a.ObservedGPUIDs = append(a.ObservedGPUIDs, s)
			if len(a.ObservedGPUIDs) == maxGPUIDs {
				break
			}
		}
		if len(a.ObservedGPUIDs) > 0 {
			fields++
		}
	}
	for key, dst := range map[string]**string{
		"producer_sha":          &a.ProducerSHA,
		"exporter_image_sha256": &a.ExporterImageSHA256,
	} {
		if s, ok := nonEmptyString(m[key]); ok && len(s) <= maxShaLen {
			*dst = &s
			fields++
		}
	}
	return marshalNonEmpty(a, fields)
}

// isAuditSource accepts a relative path of [a-zA-Z0-9_./-] without "..".
func isAuditSource(s string) bool {
	if s == "" || len(s) > maxAuditSourceLen || s[0] == '/' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '/' || c == '-') {
			return false
		}
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == ".." {
			return false
		}
	}
	return true
}
