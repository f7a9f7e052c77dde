package traces

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A log file is stored as one text value: up to 512 MiB, larger ones fail
// their bundle with the size and the limit.
func TestCheckLogSize(t *testing.T) {
	for _, tc := range []struct {
		size int64
		err  string
	}{
		{0, ""},
		{512 << 20, ""},
		{512<<20 + 1, "log file of 536870913 bytes: larger than 512 MiB"},
		{3 << 30, "log file of 3221225472 bytes"},
	} {
		err := checkLogSize(tc.size)
		if tc.err == "" {
			require.NoError(t, err, "%d", tc.size)
		} else {
			require.ErrorContains(t, err, tc.err)
		}
	}
}
