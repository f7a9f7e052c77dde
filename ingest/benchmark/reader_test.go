package benchmark

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// delivered is one call of the row callback.
type delivered struct {
	Index int
	Row   map[string]any
	Err   string
}

func readAll(t testing.TB, input string, shape Shape) ([]delivered, int, error) {
	t.Helper()
	var got []delivered
	rows, err := ReadRows(strings.NewReader(input), shape, func(index int, row map[string]any, rowErr error) error {
		d := delivered{Index: index, Row: row}
		if rowErr != nil {
			d.Err = rowErr.Error()
		}
		got = append(got, d)
		return nil
	})
	return got, rows, err
}

func TestReadRows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		shape   Shape
		rows    []string // per delivered row: its "id" value, or "error: <message>"
		fileErr string
	}{
		{name: "object", input: `{"id": "a", "conc": 4}`, rows: []string{"a"}},
		{name: "object with BOM and whitespace", input: "\ufeff \n{\"id\": \"a\"}\n\n", rows: []string{"a"}},
		{name: "array", input: `[{"id": "a"}, {"id": "b"}]`, rows: []string{"a", "b"}},
		{name: "aggregate array", input: "[\n  {\"id\": \"a\"}\n]\n", shape: ArrayOnly, rows: []string{"a"}},
		{name: "empty array", input: ` [ ] `, shape: ArrayOnly},
		{name: "NaN in row 1", input: `[{"id": "a"}, {"id": "b", "p99_ttft": NaN}, {"id": "c"}]`,
			rows: []string{"a", "error: row 1: non-finite number NaN is not valid JSON", "c"}},
		{name: "Infinity and -Infinity", input: `[{"x": Infinity}, {"x": -Infinity}]`,
			rows: []string{"error: row 0: non-finite number Infinity is not valid JSON", "error: row 1: non-finite number -Infinity is not valid JSON"}},
		{name: "NaN in a single object", input: `{"x": NaN}`,
			rows: []string{"error: row 0: non-finite number NaN is not valid JSON"}},
		{name: "NaN inside a string is fine", input: `[{"id": "NaN Infinity"}]`, rows: []string{"NaN Infinity"}},
		{name: "non-object rows", input: `[{"id": "a"}, "text", 42, [1, 2], null, true]`,
			rows: []string{"a", "error: row 1: not an object (string)", "error: row 2: not an object (number)",
				"error: row 3: not an object (array)", "error: row 4: not an object (null)", "error: row 5: not an object (boolean)"}},
		{name: "syntax error in one row", input: `[{"id": "a"}, {"id": "b" "c": 1}, {"id": "c"}]`,
			rows: []string{"a", "error: row 1: invalid JSON: invalid character '\"' after object key:value pair", "c"}},
		{name: "missing value", input: `[{"id": "a"},, {"id": "c"}]`,
			rows: []string{"a", "error: row 1: missing value", "c"}},
		{name: "strings with brackets and escaped quotes",
			input: `[{"id": "a]},[{", "s": "quote \" ] } , [ {"}, {"id": "b\\", "t": "x\\\"]"}]`,
			rows:  []string{"a]},[{", `b\`}},
		{name: "nested containers", input: `[{"id": "a", "m": {"l": [1, {"x": [2]}]}}, {"id": "b"}]`, rows: []string{"a", "b"}},
		{name: "empty file", input: ``, fileErr: "empty file"},
		{name: "whitespace only", input: " \n\t\r\n", fileErr: "empty file"},
		{name: "not JSON", input: `hello`, fileErr: "not JSON: unexpected character 'h' at offset 0"},
		{name: "object under ArrayOnly", input: `{"id": "a"}`, shape: ArrayOnly, fileErr: "aggregate file is not a JSON array"},
		{name: "scalar file", input: `"x"`, fileErr: "file is a JSON string, not an object or array"},
		{name: "scalar aggregate", input: `42`, shape: ArrayOnly, fileErr: "aggregate file is not a JSON array"},
		{name: "truncated array", input: `[{"id": "a"}, {"id": "b"}, {"id": "c", "x`,
			rows: []string{"a", "b"}, fileErr: "unexpected end of file after row 1"},
		{name: "truncated after comma", input: `[{"id": "a"},`, rows: []string{"a"}, fileErr: "unexpected end of file after row 0"},
		{name: "truncated before first row", input: `[`, fileErr: "unexpected end of file before row 0"},
		{name: "truncated object", input: `{"id": "a", "x": [1, 2`, fileErr: "unexpected end of file inside the row object"},
		{name: "trailing garbage after array", input: `[{"id": "a"}] x`, rows: []string{"a"},
			fileErr: "trailing data after the JSON value at offset 14"},
		{name: "trailing garbage after object", input: `{"id": "a"} {"id": "b"}`,
			fileErr: "trailing data after the JSON value at offset 12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, rows, err := readAll(t, tt.input, tt.shape)
			if tt.fileErr == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tt.fileErr)
			}
			require.Equal(t, len(got), rows, "rows counts what was delivered")
			var summary []string
			for i, d := range got {
				require.Equal(t, i, d.Index)
				if d.Err != "" {
					require.Nil(t, d.Row)
					summary = append(summary, "error: "+d.Err)
					continue
				}
				summary = append(summary, d.Row["id"].(string))
			}
			require.Equal(t, tt.rows, summary)
		})
	}
}

func TestReadRowsNumbersStayExact(t *testing.T) {
	t.Parallel()
	got, _, err := readAll(t, `[{"big": 261750519, "f": 92.52239999999999, "tiny": 5e-324}, {"huge": 1e400}]`, ArrayOnly)
	require.NoError(t, err)
	require.Equal(t, 261750519.0, got[0].Row["big"])
	require.Equal(t, 92.52239999999999, got[0].Row["f"], "Python's shortest repr round-trips through float64")
	require.Equal(t, 5e-324, got[0].Row["tiny"])
	require.Equal(t, `row 1: field "huge": number 1e400 does not fit a float64`, got[1].Err, "a number beyond float64 fails its row, not the file, and is named")
	nested, _, err := readAll(t, `[{"a": 1, "m": {"x": [1, -2e999]}}]`, ArrayOnly)
	require.NoError(t, err)
	require.Equal(t, `row 0: field "m.x[1]": number -2e999 does not fit a float64`, nested[0].Err)
}

func TestReadRowsSentinelErrors(t *testing.T) {
	t.Parallel()
	_, _, err := readAll(t, "  ", ObjectOrArray)
	require.ErrorIs(t, err, ErrEmptyFile)
	_, _, err = readAll(t, `{}`, ArrayOnly)
	require.ErrorIs(t, err, ErrNotArray)
}

func TestReadRowsCallbackErrorStops(t *testing.T) {
	t.Parallel()
	stop := errors.New("stop")
	calls := 0
	rows, err := ReadRows(strings.NewReader(`[{}, {}, {}]`), ArrayOnly, func(int, map[string]any, error) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	require.Equal(t, 2, rows)
	require.Equal(t, 2, calls)
}

func TestReadRowsReadError(t *testing.T) {
	t.Parallel()
	broken := io.MultiReader(strings.NewReader(`[{"id": "a"}, {"id"`), iotest.ErrReader(errors.New("disk on fire")))
	rows, err := ReadRows(broken, ArrayOnly, func(int, map[string]any, error) error { return nil })
	require.ErrorContains(t, err, "disk on fire")
	require.Equal(t, 1, rows)
}

// TestReadRowsStreams checks that rows are delivered before the input ends:
// the reader must not slurp the file.
func TestReadRowsStreams(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	seen := make(chan int, 4)
	done := make(chan error, 1)
	go func() {
		_, err := ReadRows(pr, ArrayOnly, func(index int, _ map[string]any, _ error) error {
			seen <- index
			return nil
		})
		done <- err
	}()
	_, err := io.WriteString(pw, `[{"id": "a"}, `)
	require.NoError(t, err)
	require.Equal(t, 0, <-seen, "row 0 is delivered while the file is still open")
	_, err = io.WriteString(pw, `{"id": "b"}]`)
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	require.Equal(t, 1, <-seen)
	require.NoError(t, <-done)
}
