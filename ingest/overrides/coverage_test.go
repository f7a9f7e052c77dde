package overrides

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCoverageLossAccepted: entries of every file add up per run; an
// entry without a positive run id, a reason or a curve is refused when
// the ledger loads.
func TestCoverageLossAccepted(t *testing.T) {
	o, err := Load(Extension{Data: []byte(`{"coverageLossAccepted": [{"runId": 7, "curves": ["a/b"], "reason": "r"}]}`)},
		Extension{Data: []byte(`{"coverageLossAccepted": [{"runId": 7, "curves": ["a/b", "c/d"], "reason": "r"}]}`)})
	require.NoError(t, err)
	require.Equal(t, []string{"a/b", "c/d"}, o.CoverageLossAccepted(7))
	require.Empty(t, o.CoverageLossAccepted(8))
	var none *Overrides
	require.Empty(t, none.CoverageLossAccepted(7))
	for _, bad := range []string{
		`{"coverageLossAccepted": [{"runId": 0, "curves": ["a"], "reason": "r"}]}`,
		`{"coverageLossAccepted": [{"runId": 7, "curves": ["a"], "reason": " "}]}`,
		`{"coverageLossAccepted": [{"runId": 7, "curves": [], "reason": "r"}]}`,
		`{"coverageLossAccepted": [{"runId": 7, "curves": [""], "reason": "r"}]}`,
	} {
		_, err := Load(Extension{Data: []byte(bad)})
		require.ErrorContains(t, err, "coverage loss acceptance", bad)
	}
}
