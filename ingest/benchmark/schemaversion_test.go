package benchmark

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The reference's contract (etl/result-schema-version.ts): an unstamped
// row or the number 1 is read; any other stamp is refused, strings, null
// and booleans included.
func TestCheckResultSchemaVersion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		row    string
		reason string
	}{
		{`{"conc": 4}`, ""},
		{`{"result_schema_version": 1}`, ""},
		{`{"result_schema_version": 1.0}`, ""},
		{`{"result_schema_version": 2}`, "result_schema_version 2 is not supported (this ingest reads 1)"},
		{`{"result_schema_version": 0}`, "result_schema_version 0 is not supported (this ingest reads 1)"},
		{`{"result_schema_version": "1"}`, `result_schema_version "1" is not supported (this ingest reads 1)`},
		{`{"result_schema_version": null}`, "result_schema_version null is not supported (this ingest reads 1)"},
		{`{"result_schema_version": true}`, "result_schema_version true is not supported (this ingest reads 1)"},
		{`{"result_schema_version": 1.5}`, "result_schema_version 1.5 is not supported (this ingest reads 1)"},
	} {
		dec := json.NewDecoder(strings.NewReader(c.row))
		dec.UseNumber()
		var row map[string]any
		require.NoError(t, dec.Decode(&row))
		err := CheckResultSchemaVersion(row)
		if c.reason == "" {
			require.NoError(t, err, c.row)
			continue
		}
		require.EqualError(t, err, c.reason, c.row)
		_, o := newTestNormalizer(t).Normalize(row)
		require.Equal(t, Outcome{Kind: Failed, Reason: c.reason, UnsupportedSchema: true}, o, c.row)
	}
}
