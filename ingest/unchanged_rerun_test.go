package ingest_test

import (
	"context"

	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

// hUnchangedAnswered counts the hostile cases whose plain rerun was
// answered from the ledger (TestHostile asserts it is not a handful).
var hUnchangedAnswered atomic.Int64

// hRerunMatchesFull reruns a case that wrote its run twice more: a plain
// rerun (answered from the ledger when its inputs and the data are
// unchanged) and a --reread rerun (read in full). Both must report the same
// thing: the same exit code and the same summary, but for the ingest's own
// id, times and the note and field saying the rerun was answered from the
// ledger. Neither may change any table.
func hRerunMatchesFull(t *testing.T, c *hCtx, args []string) {
	t.Helper()
	// A full rerun notes its transaction in data_changes (every statement
	// that could write does); no other table may change.
	before := hChecksums(t, c.db)
	delete(before, "data_changes")
	run := func(extra ...string) (hResult, *schema.Summary) {
		path := filepath.Join(t.TempDir(), "rerun.json")
		full := append([]string{"load", c.dir, "--database-url", c.db, "--summary-json", path, "--log-level", "warn"}, args...)
		r := hCLI(t.Context(), nil, append(full, extra...)...)
		return r, hSummary(t, path)
	}
	plainRes, plain := run()
	fullRes, full := run("--reread")
	require.Equal(t, fullRes.code, plainRes.code, "exit code of the plain rerun\n%s\n--- reread ---\n%s", plainRes, fullRes)
	require.NotNil(t, plain, "plain rerun wrote no summary\n%s", plainRes)
	require.NotNil(t, full, "--reread rerun wrote no summary\n%s", fullRes)
	require.Zero(t, full.Details.UnchangedSince, "a --reread rerun was answered from the ledger")
	if plain.Details.UnchangedSince != 0 {
		hUnchangedAnswered.Add(1)
		require.Less(t, plain.Details.UnchangedSince, plain.IngestID, "answered from a later ingest")
	}
	require.JSONEq(t, comparableSummary(t, full), comparableSummary(t, plain),
		"the plain rerun (unchanged since %d) reports otherwise than a full rerun", plain.Details.UnchangedSince)
	after := hChecksums(t, c.db)
	delete(after, "data_changes")
	require.Equal(t, before, after, "a rerun changed table contents")
}

// ingestTime is the clock of an ingest in a note of a run without a date:
// two full ingests of such a run say two times (and are not answered from
// the ledger).
var ingestTime = regexp.MustCompile(`using the ingest time \([^)]*\)`)

// comparableSummary is the JSON of a summary without what differs from one
// ingest to the next of the same inputs.
func comparableSummary(t *testing.T, s *schema.Summary) string {
	t.Helper()
	c := *s
	c.IngestID, c.StartedAt, c.FinishedAt = 0, time.Time{}, time.Time{}
	c.Details.DurationMS, c.Details.UnchangedSince = 0, 0
	var notes []string
	for _, n := range c.Notes {
		if !strings.HasPrefix(n, "inputs unchanged since ingest ") {
			notes = append(notes, ingestTime.ReplaceAllString(n, "using the ingest time (…)"))
		}
	}
	c.Notes = notes
	b, err := json.Marshal(c)
	require.NoError(t, err)
	return string(b)
}

// hExec runs one statement.
func hExec(t *testing.T, dbURL, q string, args ...any) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(t.Context()))
	_, err = conn.Exec(t.Context(), q, args...)
	require.NoError(t, err)
}
