package overrides

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

// exampleConfig is the reference test's disaggregated GB300 dynamo-vllm
// DeepSeek-V4 config.
const exampleConfig = `{"hardware":"gb300","framework":"dynamo-vllm","model":"dsv4","precision":"fp4","spec_method":"mtp",
	"disagg":true,"is_multinode":true,"prefill_tp":8,"prefill_ep":8,"prefill_dp_attention":true,"prefill_num_workers":1,
	"decode_tp":8,"decode_ep":8,"decode_dp_attention":true,"decode_num_workers":1,"num_prefill_gpu":8,"num_decode_gpu":8}`

// pointBackfill is the reference test's example entry, with fields
// replaced by edit.
func pointBackfill(edit map[string]any) map[string]any {
	var cfg map[string]any
	_ = json.Unmarshal([]byte(exampleConfig), &cfg)
	b := map[string]any{"id": "run-123-point-offload", "reason": "Artifact omitted the offload metadata.", "runId": 123, "attempt": 1,
		"config": cfg, "benchmarkType": "agentic_traces", "isl": nil, "osl": nil, "conc": 64, "offloadMode": "off", "recipeFingerprint": nil,
		"set": map[string]any{"offloadMode": "on", "metricsMerge": map[string]any{"kv_offloading": "dram", "kv_offload_backend": "lmcache"},
			"metricsRemove": []string{"stale_offload_field"}}}
	for k, v := range edit {
		b[k] = v
	}
	return b
}

func loadBackfills(t *testing.T, points []map[string]any, extra map[string]any) (*Overrides, error) {
	t.Helper()
	f := map[string]any{"benchmarkPointBackfills": points}
	for k, v := range extra {
		f[k] = v
	}
	b, err := json.Marshal(f)
	require.NoError(t, err)
	return Load(Extension{Data: b})
}

// The ledger's validation states the reference's facts: a stable
// kebab-case id, a reason, a non-empty patch, no two selectors or
// corrected identities alike, a previous patch naming the prior
// destination, offload_mode only through set.offloadMode, and no
// correction of a purged run or point.
func TestPointBackfillValidation(t *testing.T) {
	cases := []struct {
		name   string
		points []map[string]any
		extra  map[string]any
		want   string
	}{
		{"id", []map[string]any{pointBackfill(map[string]any{"id": "Not Valid"})}, nil, "kebab-case"},
		{"reason", []map[string]any{pointBackfill(map[string]any{"reason": " "})}, nil, "reason"},
		{"empty set", []map[string]any{pointBackfill(map[string]any{"set": map[string]any{}})}, nil, "at least one field"},
		{"source to destination", []map[string]any{pointBackfill(nil), pointBackfill(map[string]any{"id": "run-123-existing-offload-point",
			"offloadMode": "on", "set": map[string]any{"metricsMerge": map[string]any{"note": "already on"}}})}, nil, "collides"},
		{"duplicate selector", []map[string]any{pointBackfill(nil), pointBackfill(map[string]any{"id": "run-123-duplicate-stable-selector"})}, nil,
			"duplicate benchmark point selector"},
		{"duplicate id", []map[string]any{pointBackfill(nil), pointBackfill(map[string]any{"conc": 32})}, nil, "duplicate backfill id"},
		{"previous set", []map[string]any{pointBackfill(map[string]any{"previousSet": map[string]any{"offloadMode": "off"}})}, nil,
			"previousSet must identify the prior destination patch"},
		{"offload_mode merged", []map[string]any{pointBackfill(map[string]any{"set": map[string]any{"metricsMerge": map[string]any{"offload_mode": "on"}}})}, nil,
			"use set.offloadMode"},
		{"merged and removed", []map[string]any{pointBackfill(map[string]any{"set": map[string]any{"metricsMerge": map[string]any{"a": 1},
			"metricsRemove": []string{"a"}}})}, nil, "both merged and removed"},
		{"empty fingerprint", []map[string]any{pointBackfill(map[string]any{"recipeFingerprint": ""})}, nil, "recipeFingerprint"},
		{"purged run", []map[string]any{pointBackfill(nil)}, map[string]any{"purgedRuns": []any{map[string]any{"runId": 123, "reason": "broken"}}},
			"purged by the ledger"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadBackfills(t, c.points, c.extra)
			require.ErrorContains(t, err, c.want)
		})
	}
	_, err := loadBackfills(t, []map[string]any{pointBackfill(nil)}, nil)
	require.NoError(t, err)
	changelog := func(set map[string]any) map[string]any {
		return map[string]any{"changelogBackfills": []any{map[string]any{"id": "run-123-changelog", "reason": "wrong marker",
			"runId": 123, "attempt": 1, "baseRef": "master", "headRef": "feature-sha", "set": set}}}
	}
	_, err = loadBackfills(t, nil, changelog(map[string]any{}))
	require.ErrorContains(t, err, "at least one field")
	_, err = loadBackfills(t, nil, changelog(map[string]any{"configKeys": []string{""}}))
	require.ErrorContains(t, err, "configKeys must not contain empty values")
	_, err = loadBackfills(t, nil, changelog(map[string]any{"prLink": nil}))
	require.NoError(t, err, "a null prLink clears the link")
}

// The reference's ingest-time facts: the correction applies to its run
// attempt (and to an unknown attempt), not another attempt nor another
// config that reuses the point; it sets the offload column and
// metrics.offload_mode, removes then merges metrics.
func TestPointBackfillAtIngest(t *testing.T) {
	o, err := loadBackfills(t, []map[string]any{pointBackfill(nil)}, nil)
	require.NoError(t, err)
	var cfg schema.Config
	require.NoError(t, json.Unmarshal([]byte(exampleConfig), &cfg))
	point := func(c schema.Config) *schema.BenchmarkPoint {
		return &schema.BenchmarkPoint{Config: c, BenchmarkType: "agentic_traces", Conc: 64, OffloadMode: "off",
			Metrics: map[string]any{"median_itl": 0.1, "stale_offload_field": true}}
	}
	p := point(cfg)
	b, ok := o.PointBackfill(123, 1, p)
	require.True(t, ok)
	require.True(t, b.ApplyTo(p))
	require.Equal(t, "on", p.OffloadMode)
	require.Equal(t, map[string]any{"median_itl": 0.1, "offload_mode": "on", "kv_offloading": "dram", "kv_offload_backend": "lmcache"}, p.Metrics)
	_, ok = o.PointBackfill(123, 2, point(cfg))
	require.False(t, ok, "another attempt")
	_, ok = o.PointBackfill(123, 0, point(cfg))
	require.True(t, ok, "an unknown attempt matches by run and point")
	other := cfg
	other.DecodeTP, other.NumDecodeGPU = 16, 16
	_, ok = o.PointBackfill(123, 1, point(other))
	require.False(t, ok, "another config")
}

// The reference's changelog facts: append_only on every entry, the other
// fields on the final entry (the one the reference stores).
func TestChangelogBackfillAtIngest(t *testing.T) {
	o, err := Load(Extension{Data: []byte(`{"changelogBackfills":[{"id":"run-123-changelog-configs","reason":"The artifact listed the wrong config key.",
		"runId":123,"attempt":1,"baseRef":"master","headRef":"feature-sha",
		"set":{"configKeys":["dsv4-fp4-b300-vllm-mtp"],"description":"Corrected description","prLink":null,"appendOnly":true}}]}`)})
	require.NoError(t, err)
	b, ok := o.ChangelogBackfill(123, 1, "master", "feature-sha")
	require.True(t, ok)
	_, ok = o.ChangelogBackfill(123, 2, "master", "feature-sha")
	require.False(t, ok)
	first, final := "https://example.com/first", "https://example.com/final"
	rows := []schema.ChangelogRow{{ConfigKeys: []string{"old-first"}, Description: "First entry", PRLink: &first},
		{ConfigKeys: []string{"old-final"}, Description: "Final stored entry", PRLink: &final}}
	require.Equal(t, 2, b.ApplyTo(rows))
	require.Equal(t, []string{"old-first"}, rows[0].ConfigKeys)
	require.True(t, rows[0].AppendOnly)
	require.Equal(t, schema.ChangelogRow{ConfigKeys: []string{"dsv4-fp4-b300-vllm-mtp"}, Description: "Corrected description", AppendOnly: true}, rows[1])
	require.Zero(t, b.ApplyTo(rows), "applied once")
}
