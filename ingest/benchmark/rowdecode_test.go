package benchmark

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/strictjson"
)

// checkedDecode is decodeRow without its fast path: the strict check, then
// the decoder.
func checkedDecode(data []byte) (map[string]any, error) {
	if err := strictjson.Check(data); err != nil {
		return nil, err
	}
	var row map[string]any
	if err := json.Unmarshal(data, &row); err != nil {
		return nil, err
	}
	return row, nil
}

// FuzzDecodeFastMatchesChecked checks that rowDecoder's fast path accepts
// only what the strict check and the decoder accept, with equal values, and
// that decodeRow fails with the same message either way.
func FuzzDecodeFastMatchesChecked(f *testing.F) {
	for _, seed := range []string{
		`{"hw":"b200","conc":64,"p99.9_ttft":4.42368,"router":{"name":"x","version":"1"}}`,
		`{"a":NaN}`, `{"a":1e400}`, `{"a":"\u0000"}`, `{"a":[1,2,{"b":null}]}`, `{"a":1}x`, `{"a":"\xff"}`,
		`{"a":1,"a":2}`, `{"a":-0.0,"b":5e-324,"c":-0,"d":1024,"e":1025,"f":-7}`, `{}`, `{"a":tru}`,
		`{"a":"\ud83d\ude00","b":"\u00e9\n\t\"\\\/","\u0061":[],"c":{}}`, `{"a":"\ud83d"}`, `{"a":"\ude00"}`,
		`{"a":123456789012345678901234567890,"b":1.5e3,"c":1E-2,"d":0.1}`, `{"a":01}`, `{"a":-}`, `{"a":1.}`,
		`{"a":"é","b":"` + "\u2028" + `"}`, ` { "a" : [ 1 , true , false , null ] } `, `{"a":1,}`, `{"a":[1,]}`,
		`{"x":{"a":1},"y":{"a":1}}`, `{"x":{"a":1,"a":1}}`, `{"a":"\u00"}`, `{"a":"` + "\x01" + `"}`,
		`{"a":0.00764,"b":-0.0,"c":123.450,"d":0.1,"e":999999999999999.9,"f":1.0000000000000002,"g":0.0000000000000000000000001}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d rowDecoder
		fast, ok := d.decodeFast(data)
		want, werr := checkedDecode(data)
		if ok {
			require.NoError(t, werr, "the fast path accepts %q", data)
			require.Equal(t, want, fast, "%q", data)
		}
		if len(data) == 0 || data[0] != '{' {
			return
		}
		var old rowDecoder
		got, gerr := decodeRow(&d, 3, data)
		// The fallback alone: a decoder whose fast path is bypassed.
		oldRow, oerr := slowDecodeRow(&old, 3, data)
		if oerr != nil {
			require.EqualError(t, gerr, oerr.Error(), "%q", data)
			return
		}
		require.NoError(t, gerr, "%q", data)
		require.Equal(t, oldRow, got, "%q", data)
	})
}

// slowDecodeRow is decodeRow as it was before the fast path.
func slowDecodeRow(d *rowDecoder, index int, elem []byte) (map[string]any, error) {
	d.disabled = true
	defer func() { d.disabled = false }()
	return decodeRow(d, index, elem)
}

// TestDecodeFastGoldenRows decodes every row of the golden inputs both ways.
func TestDecodeFastGoldenRows(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("testdata", "rows", "*.json"))
	require.NoError(t, err)
	rd := NewReader()
	for _, p := range paths {
		f, err := os.Open(p)
		require.NoError(t, err)
		fastRows := 0
		_, err = rd.ReadElements(f, ObjectOrArray, func(e *Element) error {
			want, werr := checkedDecode(e.Raw)
			got, ok := e.dec.decodeFast(e.Raw)
			if werr == nil {
				require.True(t, ok, "%s row %d", p, e.Index)
				require.Equal(t, want, got, "%s row %d", p, e.Index)
				fastRows++
			}
			return nil
		})
		f.Close()
		require.NoError(t, err, p)
		require.Positive(t, fastRows, p)
	}
}

// TestDecodeFastNumbers compares the numbers the fast path computes with
// strconv.ParseFloat, bit for bit, over numbers of every length and scale.
func TestDecodeFastNumbers(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	lits := []string{"0", "-0", "0.0", "-0.0", "0.5", "1.25", "123.450", "0.00764", "999999999999999", "9999999999999999",
		"0.1", "0.2", "0.3", "1e3", "1.5E-3", "-7", "1024", "1025", "0.000000000000000000001", "4.42368", "1234567.1234567"}
	for range 20000 {
		digits := 1 + rng.IntN(18)
		var b strings.Builder
		if rng.IntN(3) == 0 {
			b.WriteByte('-')
		}
		point := rng.IntN(digits + 1)
		for i := range digits {
			if i == point && i > 0 {
				b.WriteByte('.')
			}
			c := byte('0' + rng.IntN(10))
			if i == 0 && c == '0' && point != 1 {
				c = '1'
			}
			b.WriteByte(c)
		}
		lits = append(lits, b.String())
	}
	var d rowDecoder
	for _, lit := range lits {
		want, err := strconv.ParseFloat(lit, 64)
		require.NoError(t, err, lit)
		row, ok := d.decodeFast([]byte(`{"v":` + lit + `}`))
		require.True(t, ok, lit)
		got, isFloat := row["v"].(float64)
		require.True(t, isFloat, lit)
		require.Equal(t, math.Float64bits(want), math.Float64bits(got), "%s: %v, want %v", lit, got, want)
	}
}
