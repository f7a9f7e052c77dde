package backfill_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/backfill"
)

func TestReadRunIDs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file string
		want       []int64
		err        string
	}{
		{name: "one a line", file: "3\n1\n2\n", want: []int64{3, 1, 2}},
		{name: "no final new line", file: "3\n1", want: []int64{3, 1}},
		{name: "spaces, tabs and commas", file: "10, 20,30\t40  50\n,,60,\n", want: []int64{10, 20, 30, 40, 50, 60}},
		{name: "CRLF", file: "7\r\n8\r\n", want: []int64{7, 8}},
		{name: "comments", file: "# runs of June\n11 # the first\n  # 99\n12#13\n", want: []int64{11, 12}},
		{name: "duplicates keep the first place", file: "5 3\n5,3\n9 5", want: []int64{5, 3, 9}},
		{name: "large ids", file: "31000000000 9223372036854775807", want: []int64{31000000000, 9223372036854775807}},
		{name: "empty file", file: "", err: "runs.txt: no run ids"},
		{name: "only comments and blanks", file: "# nothing yet\n\n , \n", err: "runs.txt: no run ids"},
		{name: "a word", file: "1\n2 abc\n", err: `runs.txt:2: "abc" is not a run id`},
		{name: "zero", file: "0", err: `runs.txt:1: "0" is not a run id`},
		{name: "negative", file: "1\n\n-4", err: `runs.txt:3: "-4" is not a run id`},
		{name: "a URL", file: "https://github.com/o/r/actions/runs/1", err: `runs.txt:1: "https://github.com/o/r/actions/runs/1" is not a run id`},
		{name: "too large", file: "9223372036854775808", err: `runs.txt:1: "9223372036854775808" is not a run id`},
		{name: "semicolons are not separators", file: "1;2", err: `runs.txt:1: "1;2" is not a run id`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids, digest, err := backfill.ReadRunIDs(strings.NewReader(tc.file), "runs.txt")
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				require.Nil(t, ids)
				require.Empty(t, digest)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, ids)
			require.Len(t, digest, 32)
		})
	}
}

// The digest (part of the pass key) is the set's: order, duplicates,
// separators and comments do not change it; another set does.
func TestReadRunIDsDigestIsTheSet(t *testing.T) {
	t.Parallel()
	digest := func(file string) string {
		t.Helper()
		_, d, err := backfill.ReadRunIDs(strings.NewReader(file), "runs.txt")
		require.NoError(t, err)
		return d
	}
	same := digest("1\n2\n3\n")
	for _, file := range []string{"3 2 1", "2,1,3,3,1", "# header\n1 # a\n2\n\n3\n"} {
		require.Equal(t, same, digest(file), "%q", file)
	}
	for _, file := range []string{"1 2", "1 2 3 4", "1 2 30", "12 3"} {
		require.NotEqual(t, same, digest(file), "%q", file)
	}
}
