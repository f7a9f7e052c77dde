package benchmark

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRecycledRowsDecodeAlike reads rows of different shapes with a reader
// whose rows are handed back (Reader.Recycle) and with one whose are not:
// every row decodes to the same values (those of the checked decoder, as
// strings remembered from the row before by place must not leak) and fails
// with the same words, and the handed-back map is the next row's.
func TestRecycledRowsDecodeAlike(t *testing.T) {
	t.Parallel()
	input := `[` + strings.Join([]string{
		`{"hw":"b200","conc":64,"p99.9_ttft":4.42368,"router":{"name":"x","version":"1"}}`,
		`{"a":1}`,
		`{"a":1,"a":2}`,
		`{"x":{"a":1},"y":[{"b":2},"c"],"z":null,"w":true}`,
		`{}`,
		`{"a":NaN}`,
		`{"hw":"h100","conc":8,"isl":1024,"osl":1024,"tput_per_gpu":1.5,"image":"img","model":"m","framework":"f"}`,
		`{"b":"\u00e9","c":-0.5}`,
		`{"hw":"h100","conc":8,"isl":1024,"osl":1024,"tput_per_gpu":1.5,"image":"img","model":"m","framework":"f"}`,
		`{"hw":"h200","conc":8,"isl":2048,"model":"m","osl":1024,"framework":"g","image":"img2","x":{"hw":"h100"}}`,
		`{"conc":"8","hw":"h100"}`,
	}, ",") + `]`
	read := func(recycle bool) (rows []map[string]any, errs []string, reused int) {
		rd := NewReader()
		var last uintptr
		_, err := rd.ReadElements(strings.NewReader(input), ArrayOnly, func(e *Element) error {
			row, err := e.Decode()
			if err != nil {
				errs = append(errs, err.Error())
				return nil
			}
			errs = append(errs, "")
			want, err := checkedDecode(e.Raw) // no strings remembered from other rows
			require.NoError(t, err)
			require.Equal(t, want, row)
			if p := reflect.ValueOf(row).Pointer(); p == last {
				reused++
			}
			rows = append(rows, maps.Clone(row)) // the decoder may refill the map itself
			if recycle {
				last = reflect.ValueOf(row).Pointer()
				rd.Recycle(row)
			}
			return nil
		})
		require.NoError(t, err)
		return rows, errs, reused
	}
	wantRows, wantErrs, _ := read(false)
	gotRows, gotErrs, reused := read(true)
	require.Equal(t, wantRows, gotRows)
	require.Equal(t, wantErrs, gotErrs)
	require.Positive(t, reused, "no recycled map was reused")
}
