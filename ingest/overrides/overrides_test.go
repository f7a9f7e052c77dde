package overrides

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

func TestEmbeddedLedgerLoads(t *testing.T) {
	o, err := Load()
	require.NoError(t, err)
	_, purged := o.RunPurged(1, 1)
	require.False(t, purged)
}

func TestPurges(t *testing.T) {
	ext := `{"purgedRuns":[{"runId":10,"reason":"bad cluster"}],
	"purgedRunAttempts":[{"runId":11,"attempts":[2],"reason":"flaky attempt"}],
	"purgedPoints":[{"runId":12,"attempt":0,"config":{"hardware":"b200","framework":"sglang","model":"dsr1","precision":"fp4","spec_method":"none","prefill_tp":8,"prefill_ep":1,"decode_tp":8,"decode_ep":1,"num_prefill_gpu":8,"num_decode_gpu":8},
	  "benchmarkType":"single_turn","isl":8192,"osl":1024,"conc":64,"offloadMode":"off","recipeFingerprint":null,"reason":"bad point"}],
	"conclusionOverrides":[{"runId":13,"conclusion":"success","reason":"rerun fixed it"}]}`
	o, err := Load(Extension{Data: []byte(ext)})
	require.NoError(t, err)

	cases := []struct {
		run     int64
		attempt int
		want    bool
	}{{10, 1, true}, {10, 3, true}, {11, 1, false}, {11, 2, true}, {12, 1, false}}
	for _, c := range cases {
		_, got := o.RunPurged(c.run, c.attempt)
		require.Equal(t, c.want, got, "run %d attempt %d", c.run, c.attempt)
	}
	isl, osl := 8192, 1024
	p := &schema.BenchmarkPoint{Config: schema.Config{Hardware: "b200", Framework: "sglang", Model: "dsr1", Precision: "fp4", SpecMethod: "none",
		PrefillTP: 8, PrefillEP: 1, DecodeTP: 8, DecodeEP: 1, NumPrefillGPU: 8, NumDecodeGPU: 8},
		BenchmarkType: "single_turn", ISL: &isl, OSL: &osl, Conc: 64, OffloadMode: "off"}
	reason, purged := o.PointPurged(12, 3, p)
	require.True(t, purged)
	require.Equal(t, "bad point", reason)
	_, purged = o.PointPurged(13, 1, p)
	require.False(t, purged, "another run")
	fp := "abc"
	p.RecipeFingerprint = &fp
	_, purged = o.PointPurged(12, 1, p)
	require.False(t, purged, "a fingerprinted row is a different point")

	c, ok := o.Conclusion(13)
	require.True(t, ok)
	require.Equal(t, "success", c)
}

func TestInvalidLedgers(t *testing.T) {
	for name, body := range map[string]string{
		"no reason":         `{"purgedRuns":[{"runId":1}]}`,
		"bad id":            `{"purgedRuns":[{"runId":0,"reason":"x"}]}`,
		"unknown field":     `{"purgedRunz":[]}`,
		"bad conclusion":    `{"conclusionOverrides":[{"runId":1,"conclusion":"great","reason":"x"}]}`,
		"incomplete point":  `{"purgedPoints":[{"runId":1,"reason":"x"}]}`,
		"empty fingerprint": `{"purgedPoints":[{"runId":1,"config":{"hardware":"b200","model":"dsr1"},"benchmarkType":"single_turn","conc":1,"offloadMode":"off","recipeFingerprint":"","reason":"x"}]}`,
		"purged twice":      `{"purgedRuns":[{"runId":1,"reason":"x"},{"runId":1,"reason":"y"}]}`,
		"not json":          `{`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(Extension{Data: []byte(body)})
			require.Error(t, err)
			require.Contains(t, err.Error(), "overrides extension 1")
		})
	}
}

// A ledger file is read strictly: what a lenient decoder would apply in
// part (the first of two objects, the last of two spellings of a key) or
// skip (trailing data, an unknown field) refuses the whole ledger, and the
// error names the file and where or what.
func TestLedgerParsedStrictly(t *testing.T) {
	purge := `{"runId":1,"reason":"x"}`
	for _, tt := range []struct {
		name, body, want string
	}{
		{"trailing data", `{"purgedRuns":[` + purge + `]} trailing`, "line 1, column 43: data after the JSON value"},
		{"two objects", "{\"purgedRuns\":[" + purge + "]}\n{\"purgedRuns\":[{\"runId\":2,\"reason\":\"y\"}]}", "line 2, column 1: data after the JSON value"},
		{"duplicate top-level key", `{"purgedRuns":[` + purge + `],"purgedRuns":[{"runId":2,"reason":"y"}]}`, `line 1, column 42: duplicate key "purgedRuns"`},
		{"duplicate nested key", `{"purgedRuns":[{"runId":1,"runId":2,"reason":"x"}]}`, `line 1, column 27: duplicate key "purgedRuns[0].runId"`},
		{"duplicate key in a point's config", `{"purgedPoints":[{"runId":1,"config":{"model":"a","model":"b"}}]}`, `duplicate key "purgedPoints[0].config.model"`},
		{"unknown top-level field", `{"purgedRunz":[]}`, `unknown field "purgedRunz"`},
		{"unknown nested field", `{"purgedRuns":[{"runId":1,"reasn":"x"}]}`, `unknown field "reasn"`},
		{"empty", "", "empty document"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(Extension{Name: "ops/extra-overrides.json", Data: []byte(tt.body)})
			require.Error(t, err)
			require.Contains(t, err.Error(), "ops/extra-overrides.json: ")
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

// The retirement policy holds the reference's two points; an entry matches
// on its run, a known attempt and head commit, and the exact point.
func TestGPUPowerRetiredMatchesExactIdentity(t *testing.T) {
	o, err := Load()
	require.NoError(t, err)
	require.Len(t, o.RetiredGPUPower(), 2)
	first := o.RetiredGPUPower()[0]
	require.Equal(t, int64(28646817197), first.RunID)
	require.Equal(t, "atom", first.Config.Framework)
	require.Equal(t, 128, first.Conc)
	require.Nil(t, first.RecipeFingerprint, "the first point predates recipe fingerprints")
	other := *first.Point()
	other.Config.PrefillTP = 8
	cases := []struct {
		name    string
		attempt int
		head    string
		p       *schema.BenchmarkPoint
		want    bool
	}{
		{"exact", 1, first.HeadSHA, first.Point(), true},
		{"attempt and head unknown", 0, "", first.Point(), true},
		{"another attempt", 2, first.HeadSHA, first.Point(), false},
		{"another head", 1, strings.Repeat("0", 40), first.Point(), false},
		{"another config", 1, first.HeadSHA, &other, false},
	}
	for _, c := range cases {
		_, got := o.GPUPowerRetired(first.RunID, c.attempt, c.head, c.p)
		require.Equal(t, c.want, got, c.name)
	}
}

func TestStripGPUPowerKeepsEverythingElse(t *testing.T) {
	p := &schema.BenchmarkPoint{Metrics: map[string]any{"avg_power_w": 535.0, "prefill_joules_per_input_token": 1.5,
		"avg_cpu_socket_power_w": 250.0, "power_valid": 1.0, "mean_ttft": 0.2},
		Workers: []byte(`[{"role":"decode","avg_power_w":535,"avg_temp_c":72}]`)}
	removed, err := StripGPUPower(p, []string{"avg_power_w", "prefill_joules_per_input_token"})
	require.NoError(t, err)
	require.True(t, removed)
	require.Equal(t, map[string]any{"avg_cpu_socket_power_w": 250.0, "power_valid": 1.0, "mean_ttft": 0.2}, p.Metrics)
	require.JSONEq(t, `[{"role":"decode","avg_temp_c":72}]`, string(p.Workers))
	removed, err = StripGPUPower(p, []string{"avg_power_w"})
	require.NoError(t, err)
	require.False(t, removed, "a second strip finds nothing")
}
