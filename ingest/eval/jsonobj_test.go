package eval

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAppendObjectsAreMarshal: the hand-written encodings of a sample's
// objects are byte for byte encoding/json's: sorted keys, escaped keys,
// raw values compacted and HTML-escaped, floats in its two notations.
func TestAppendObjectsAreMarshal(t *testing.T) {
	t.Parallel()
	raws := []map[string]json.RawMessage{
		{},
		{"b": json.RawMessage(`1`), "a": json.RawMessage(`"x"`), "c": json.RawMessage(`[1, 2, {"k": null}]`)},
		{"until": json.RawMessage(`["</s>", "Q:", "<|im_end|>"]`), "do_sample": json.RawMessage(`false`),
			"esc": json.RawMessage(` { "a\u2028" : "tab\t&amp;" } `), "line sep": json.RawMessage("\"\u2028\u2029\"")},
		{"k<&>\"\\": json.RawMessage(`true`), "ünï": json.RawMessage(`-1.5e-7`), "nil": nil},
		{"quoted": json.RawMessage(`"say \"<hi>\" \\" `), "spaces": json.RawMessage("[ \"a  b\" ,\n\t{ \"k\" : [ 1 , 2.5e3 ] } ]"),
			"escaped backslash then quote": json.RawMessage(`["\\", "x&y", "\u2028"]`), "e2 not a separator": json.RawMessage(`"€ … ✓"`)},
	}
	for _, m := range raws {
		want, err := json.Marshal(m)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendRawObject(nil, m)))
	}
	args := map[string]map[string]json.RawMessage{
		"gen_args_0": {"arg_1": json.RawMessage(`{"until": ["\n\n", "Question:"], "temperature": 0.0}`)},
		"gen_args_1": {},
		"a":          nil,
	}
	want, err := json.Marshal(args)
	require.NoError(t, err)
	require.Equal(t, string(want), string(appendArgsObject(nil, args)))

	floats := map[string]float64{"exact_match,strict-match": 1, "acc": 0.5, "tiny": 1.5e-7, "tinier": -2e-10, "huge": 3e21,
		"big": 1e20, "zero": 0, "neg": -0.25, "third": 1.0 / 3, "edge": 1e-6, "max": math.MaxFloat64}
	want, err = json.Marshal(floats)
	require.NoError(t, err)
	got, ok := appendFloatObject(nil, floats)
	require.True(t, ok)
	require.Equal(t, string(want), string(got))
	_, ok = appendFloatObject(nil, map[string]float64{"nan": math.NaN()})
	require.False(t, ok, "encoding/json refuses a NaN")
}
