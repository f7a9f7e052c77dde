package ingest_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/changelog"
	"github.com/inferencex/ingest/schema"
)

// Bad changelog entries fail one by one and never become rows; a file with
// more entries than the bound fails whole and the run gets its fallback
// entry. The benchmark rows land either way.
func TestBadChangelogIsReportedAndTheRestLands(t *testing.T) {
	t.Parallel()
	const file = "changelog_metadata.json"
	for _, c := range []struct {
		name     string
		body     string
		reason   string
		rows     int
		fallback bool
	}{
		{"empty and invalid entries", `{"base_ref": "a", "head_ref": "b", "entries": [{}, {"config-keys": ["k"], "eval-min-prefill-ep": -7},
			{"config-keys": ["k"], "description": "fine"}]}`, "entry 1: eval-min-prefill-ep -7 is not an integer", 1, false},
		{"more entries than the bound", `{"base_ref": "a", "head_ref": "b", "entries": [` +
			strings.Repeat(`{},`, changelog.MaxEntries) + `{}]}`, "more than the 10000 allowed", 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			dir := t.TempDir()
			perJob(t, dir, "good4", benchRow(4, nil))
			writeFile(t, filepath.Join(dir, "changelog-metadata", file), c.body)
			sum := e.mustIngest(dir, ingest.Config{Run: RunID(42, 1)})
			require.Equal(t, schema.StatusCompletedWithFailures, sum.Status)
			require.EqualValues(t, 1, sum.Rows.Benchmark.New, "the rest lands")
			var found bool
			for _, f := range sum.Failures {
				if f.Artifact == "changelog-metadata" && f.File == file && strings.Contains(f.Reason, c.reason) {
					found = true
				}
			}
			require.True(t, found, "no failure …%s… in %+v", c.reason, sum.Failures)
			require.Equal(t, c.rows, e.count(`SELECT count(*) FROM changelog_entries`))
			fb := 0
			if c.fallback {
				fb = 1
			}
			require.Equal(t, fb, e.count(`SELECT count(*) FROM changelog_entries WHERE is_fallback`))
		})
	}
}

// A changelog at the entry bound, each entry with a long description, is
// written whole: the bound keeps the one jsonb document the rows travel in
// within PostgreSQL's limits.
func TestChangelogAtTheEntryBoundIsWritten(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	perJob(t, dir, "good4", benchRow(4, nil))
	entry := `{"config-keys": ["dsr1-fp8-b200-sglang"], "description": "` + strings.Repeat("x", 300) + `"},`
	body := `{"base_ref": "a", "head_ref": "b", "entries": [` + strings.Repeat(entry, changelog.MaxEntries)
	writeFile(t, filepath.Join(dir, "changelog-metadata", "changelog_metadata.json"), strings.TrimSuffix(body, ",")+`]}`)
	sum := e.mustIngest(dir, ingest.Config{Run: RunID(42, 1)})
	require.Equal(t, schema.StatusSucceeded, sum.Status, "%+v", sum.Failures)
	require.EqualValues(t, changelog.MaxEntries, sum.Stats.ChangelogEntriesWritten)
	require.Equal(t, changelog.MaxEntries, e.count(`SELECT count(*) FROM changelog_entries`))
}
