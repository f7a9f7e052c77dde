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
	o, err := Load(strings.NewReader(ext))
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
			_, err := Load(strings.NewReader(body))
			require.Error(t, err)
			require.Contains(t, err.Error(), "overrides extension 1")
		})
	}
}
