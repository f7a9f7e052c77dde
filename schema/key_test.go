package schema

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// jsonStringsCases are parts of keys that take either path of jsonStrings.
var jsonStringsCases = [][]string{
	nil,
	{},
	{""},
	{"b200", "sglang", "dsr1", "fp4", "none", "false", "true", "8", "1", "null", "\x00null", "abc123"},
	{"a<b", "x"},
	{"x", "a>b"},
	{"a&b"},
	{`q"uote`, `back\slash`},
	{"tab\t", "nl\n", "cr\r", "bs\b", "ff\f", "nul\x00", "del\x7f", "esc\x1b"},
	{"é", "日本", "\u2028", "\u2029", "\xff", "\xc3"},
	{"\x00null", "\x00nul", "x\x00null"},
	{"~ !#$%'()*+,-./:;=?@[]^_`{|}"},
}

// TestJSONStringsIsMarshal: a key's JSON is json.Marshal's, byte for byte.
func TestJSONStringsIsMarshal(t *testing.T) {
	t.Parallel()
	for _, parts := range jsonStringsCases {
		want, err := json.Marshal(parts)
		require.NoError(t, err)
		require.Equal(t, string(want), jsonStrings(parts), "%q", parts)
	}
}

func FuzzJSONStringsIsMarshal(f *testing.F) {
	for _, parts := range jsonStringsCases {
		for _, p := range parts {
			f.Add(p, "b200")
		}
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		parts := []string{a, b, a + b}
		want, err := json.Marshal(parts)
		require.NoError(t, err)
		require.Equal(t, string(want), jsonStrings(parts))
	})
}
