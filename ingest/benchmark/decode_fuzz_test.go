package benchmark

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/strictjson"
)

// FuzzDecodeRowMatchesEncodingJSON checks that the fast row decoder accepts
// exactly what encoding/json accepts for an object, with equal values,
// except what strictjson rejects (duplicate keys, NUL, invalid UTF-8),
// which encoding/json would resolve, keep or replace silently.
func FuzzDecodeRowMatchesEncodingJSON(f *testing.F) {
	for _, seed := range []string{
		`{"hw":"b200","conc":64,"p99.9_ttft":4.42368,"router":{"name":"x","version":"1"}}`,
		`{"a":NaN}`, `{"a":1e400}`, `{"a":"\u0000"}`, `{"a":[1,2,{"b":null}]}`, `{"a":1}x`, `{"a":"\xff"}`,
		`{"a":1,"a":2}`, `{"a":-0.0,"b":5e-324}`, `{}`, `{"a":tru}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || data[0] != '{' {
			return
		}
		var want map[string]any
		stdErr := json.Unmarshal(data, &want)
		type result struct {
			row map[string]any
			err error
		}
		done := make(chan result, 1)
		go func() {
			row, err := decodeRow(new(rowDecoder), 0, data)
			done <- result{row, err}
		}()
		var got map[string]any
		var err error
		select {
		case r := <-done:
			got, err = r.row, r.err
		case <-time.After(5 * time.Second):
			t.Fatalf("decodeRow did not return within 5s for %q", data)
		}
		if stdErr != nil || strictjson.Check(data) != nil {
			require.Error(t, err, "encoding/json or strictjson rejects %q", data)
			return
		}
		require.NoError(t, err, "encoding/json accepts %q", data)
		require.Equal(t, want, got)
		// The same object inside an indented array, read through the
		// compacting scanner, decodes to the same row.
		var rows []map[string]any
		n, ferr := ReadRows(bytes.NewReader(append(append([]byte("[\n  "), data...), "\n]"...)), ArrayOnly,
			func(_ int, row map[string]any, rerr error) error {
				require.NoError(t, rerr, "%q", data)
				rows = append(rows, row)
				return nil
			})
		require.NoError(t, ferr, "%q", data)
		require.Equal(t, 1, n)
		require.Equal(t, want, rows[0])
	})
}
