package benchmark

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A row with a duplicate key, a NUL or invalid UTF-8 in a string fails on
// its own, naming the row and the field; its neighbours are read.
func TestReadRowsStrictJSON(t *testing.T) {
	const good = `{"conc": 4, "model": "dsr1"}`
	for _, tc := range []struct{ name, row, want string }{
		{"duplicate key", `{"conc": 16, "model": "dsr1", "conc": 32}`, `row 1: duplicate key "conc"`},
		{"duplicate key, escaped spelling", `{"conc": 16, "\u0063onc": 32}`, `row 1: duplicate key "conc"`},
		{"duplicate nested key", `{"conc": 16, "benchmark_outcome": {"status": "ok", "status": "failed"}}`, `row 1: duplicate key "benchmark_outcome.status"`},
		{"escaped NUL", `{"conc": 16, "model": "ds\u0000r1"}`, `row 1: field "model": string holds a NUL`},
		{"raw NUL", "{\"conc\": 16, \"model\": \"ds\x00r1\"}", `row 1: field "model": string holds a NUL`},
		{"invalid UTF-8", "{\"conc\": 16, \"model\": \"ds\xffr1\"}", `row 1: field "model": invalid UTF-8`},
		{"lone surrogate", `{"conc": 16, "model": "ds\udc00"}`, `row 1: field "model": invalid UTF-8`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, rows, err := readAll(t, "[\n"+good+",\n"+tc.row+",\n"+good+"\n]", ArrayOnly)
			require.NoError(t, err)
			require.Equal(t, 3, rows)
			require.Empty(t, got[0].Err)
			require.Nil(t, got[1].Row)
			require.Equal(t, tc.want, got[1].Err)
			require.Empty(t, got[2].Err)
			require.Equal(t, "dsr1", got[2].Row["model"])
		})
	}
}

// A per-job file holding a single row object is checked the same way.
func TestReadRowsStrictJSONSingleObject(t *testing.T) {
	got, rows, err := readAll(t, `{"conc": 16, "conc": 32}`, ObjectOrArray)
	require.NoError(t, err)
	require.Equal(t, 1, rows)
	require.Equal(t, `row 0: duplicate key "conc"`, got[0].Err)
}
