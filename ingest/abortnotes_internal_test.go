package ingest

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/stages/changelog"
	"github.com/inferencex/ingest/schema"
)

// TestAbortDropsWriteNotes: an aborted run's transaction is rolled back,
// so its report, which says "Nothing was written", keeps no note claiming
// a write (the fallback changelog entry, an override applied to stored
// data); notes about what was read stand. A run that commits keeps both.
func TestAbortDropsWriteNotes(t *testing.T) {
	t.Parallel()
	start := schema.RunStart{Run: schema.RunIdentity{SourceRunID: 7, SourceRunAttempt: 1, MergeRunID: 7, MergeRunAttempt: 1}}
	for _, aborted := range []bool{false, true} {
		sum := &schema.Summary{StartedAt: time.Unix(0, 0)}
		tl := runstate.NewTally(sum)
		tl.Note("attempt order was inferred from file modification times")
		var records []*runstate.Record
		require.NotNil(t, changelog.Read(runstate.Plan{}, start, tl, &records), "no changelog artifact: the fallback entry")
		noteOverrides(tl, sum, schema.OverrideResult{Actions: []schema.OverrideAction{{RunID: 7}}})
		require.Len(t, sum.Notes, 3)
		if !aborted {
			tl.Close()
			require.Contains(t, sum.Notes[1], "recorded one fallback changelog entry")
			continue
		}
		abort(sum, tl, Deps{Now: func() time.Time { return time.Unix(1, 0) }}, errors.New("commit: connection reset"))
		require.Equal(t, []string{"attempt order was inferred from file modification times"}, sum.Notes)
	}
}
