package store

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEncodeMetricsMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	cases := []map[string]any{
		{},
		{"tput_per_gpu": 1607.93415277835, "p99.9_e2el": 92.52239999999999, "request_goodput:": 12.5},
		{"tiny": 5e-324, "big": 1e21, "neg": -0.000001234, "int": 261750519.0, "zero": 0.0},
		{"router_name": "dynamo-router", "quote": `a"b\c`, "ctl": "x\ty\n", "uni": "héllo ✓"},
		{"list": []any{1.0, "a"}, "flag": true},
	}
	for _, m := range cases {
		got, err := encodeMetrics(nil, m)
		require.NoError(t, err)
		var back, want map[string]any
		require.NoError(t, json.Unmarshal(got, &back), string(got))
		enc, _ := json.Marshal(m)
		require.NoError(t, json.Unmarshal(enc, &want))
		require.Equal(t, want, back, string(got))
	}
}

func TestEncodeMetricsDropsWhatPostgresRejects(t *testing.T) {
	t.Parallel()
	got, err := encodeMetrics(nil, map[string]any{"a\x00b": "c\x00d", "bad": string([]byte{0xff}), "nan": math.NaN()})
	require.NoError(t, err)
	require.JSONEq(t, `{"ab":"cd","bad":"\ufffd","nan":null}`, string(got))
	require.JSONEq(t, `{"k":["ab"]}`, string(sanitizeJSON([]byte(`{"k":["a\u0000b"]}`))))
	require.Equal(t, "ab", cleanText("a\x00b"))
}

// TestMetricsEncoderReusesKeysOnlyForTheSameSet: one encoder over a stream
// of maps (same keys, as many other keys, fewer, more, none) writes what a
// fresh encoding of each map writes, byte for byte.
func TestMetricsEncoderReusesKeysOnlyForTheSameSet(t *testing.T) {
	t.Parallel()
	stream := []map[string]any{
		{"b": 1.0, "a": 2.0, "c": 3.0},
		{"c": 4.0, "a": 5.0, "b": 6.0},
		{"c": 4.0, "a": 5.0, "d": 6.0},
		{"a": 1.0, "b": 2.0},
		{"a": 1.0, "b": 2.0, "z": "s", "y": 0.5},
		{},
		{"a": 1.0},
		{"b": 1.0},
	}
	// Shapes interleaved, more of them than the encoder keeps.
	for i := range 40 {
		m := map[string]any{"x": float64(i)}
		for k := range i % (maxKeySets + 3) {
			m[string(rune('a'+k))] = float64(k)
		}
		if i%7 == 0 {
			m["x"], m["y"] = nil, "s" // the same size, another key
			delete(m, "x")
		}
		stream = append(stream, m)
	}
	var e metricsEncoder
	var buf []byte
	for _, m := range stream {
		want, err := encodeMetrics(nil, m)
		require.NoError(t, err)
		got, err := e.encode(buf[:0], m)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
		buf = got
	}
}
