package runstate

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEncodeAhead: the ledger JSON encoded ahead, then completed, is the
// one EncodeRecords gives for the final records — when later records were
// added, when none were, and when a record encoded ahead changed or moved
// afterwards (it is then encoded again).
func TestEncodeAhead(t *testing.T) {
	t.Parallel()
	records := func(n int, from int) []*Record {
		var out []*Record
		for i := from; i < from+n; i++ {
			r := &Record{Name: fmt.Sprintf("bmk_%03d <&>", i), Container: "dir", Size: int64(i)}
			if i%3 != 0 { // some records read nothing
				r.AddFile(fmt.Sprintf("f%d.json", i), sha256.Sum256([]byte{byte(i)}), int64(10+i))
			}
			out = append(out, r)
		}
		return out
	}
	cases := []struct {
		name  string
		ahead int
		later int
		after func(ahead, all []*Record)
	}{
		{name: "more records later", ahead: 20, later: 5},
		{name: "no later records", ahead: 20},
		{name: "nothing ahead", later: 7},
		{name: "nothing at all"},
		{name: "a record ahead read another file", ahead: 20, later: 3, after: func(ahead, _ []*Record) {
			ahead[4].AddFile("late.json", sha256.Sum256([]byte("late")), 4)
		}},
		{name: "records reordered", ahead: 20, later: 3, after: func(_, all []*Record) {
			slices.Reverse(all)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// build makes the records: those encoded ahead, and all of
			// them (ahead first, then later ones).
			build := func() (ahead, all []*Record) {
				ahead = records(c.ahead, 0)
				return ahead, append(slices.Clone(ahead), records(c.later, c.ahead)...)
			}
			ahead, all := build()
			a := EncodeAhead(ahead)
			if c.after != nil {
				c.after(ahead, all)
			}
			got := a.Encode(all)
			wantAhead, want := build()
			if c.after != nil {
				c.after(wantAhead, want)
			}
			require.JSONEq(t, string(EncodeRecords(want)), string(got))
			require.Equal(t, string(EncodeRecords(want)), string(got), "not byte for byte the JSON EncodeRecords writes")
			for _, r := range all {
				require.Nil(t, r.files, "record %s not sealed", r.Name)
			}
		})
	}
}
