package cli_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

var updateTour = flag.Bool("update-tour", false, "rewrite the tour's golden and its blocks in docs/tour.md")

const (
	tourGolden = "testdata/tour.md"
	tourDoc    = "../../docs/tour.md"
)

// tourStep is a block of the doc's tour: <!-- tour step N --> … <!-- /tour step N -->.
var tourStep = regexp.MustCompile(`(?s)<!-- tour step (\d+) -->\n.*?<!-- /tour step (\d+) -->\n`)

// The output of a tour step that varies from run to run: the clock's
// times and how long things took. Each is replaced by a fixed value
// whatever its unit (a step may take 900ms or 1.1s), no wider than the
// columns it sits in.
var (
	tourTime     = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\b`)
	tourDuration = regexp.MustCompile(`\b\d+(?:\.\d+)?( ?)(?:ns|µs|ms|s)\b( *)`)
)

// TestTourGolden runs the tour of docs/tour.md (linked from the README)
// on a fresh database, as its commands read, and checks that the doc
// shows exactly what they print: the outputs are the golden
// testdata/tour.md, with times and durations fixed, and each of the
// doc's step blocks must equal the golden's. After a change to what the
// commands print: go test ./ingest/cli -run TestTourGolden -update-tour.
func TestTourGolden(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	out := filepath.Join(t.TempDir(), "samples.parquet")
	steps := []struct {
		shown string
		args  []string
		code  int
	}{
		{"demo", []string{"demo"}, cli.ExitOK},
		{"report --run-id 28485856738 --format md", []string{"report", "--run-id", "28485856738", "--format", "md"}, cli.ExitOK},
		{"status", []string{"status"}, cli.ExitOK},
		{"demo", []string{"demo"}, cli.ExitOK},
		{"export telemetry --run-id 28485856738 --out /tmp/samples.parquet", []string{"export", "telemetry", "--run-id", "28485856738", "--out", out}, cli.ExitOK},
	}
	var golden strings.Builder
	for i, s := range steps {
		r := run(t, vars, s.args...)
		requireCode(t, s.code, r)
		got := strings.ReplaceAll(r.stdout, out, "/tmp/samples.parquet")
		got = tourTime.ReplaceAllString(got, "2026-12-01 09:00:00")
		got = tourDuration.ReplaceAllStringFunc(got, func(d string) string {
			v := strings.TrimRight(d, " ")
			if strings.Contains(v, " ") {
				return "12 ms" + d[len(v):] // the refresh times: "refreshed in 107 ms"
			}
			// In a table the value and its padding keep their width, so
			// the columns after it do not move with the real duration.
			if pad := len(d) - len("1.2s"); len(d)-len(v) >= 2 && pad > 0 { // a column: two spaces or more
				return "1.2s" + strings.Repeat(" ", pad)
			}
			return "1.2s" + d[len(v):]
		})
		if i > 0 {
			golden.WriteString("\n")
		}
		fmt.Fprintf(&golden, "<!-- tour step %d -->\n```console\n$ go run ./cmd/ingest %s\n%s```\n<!-- /tour step %d -->\n", i+1, s.shown, got, i+1)
	}
	if *updateTour {
		require.NoError(t, os.WriteFile(tourGolden, []byte(golden.String()), 0o644))
		doc, err := os.ReadFile(tourDoc)
		require.NoError(t, err)
		blocks := tourStep.FindAllString(golden.String(), -1)
		i := 0
		doc = tourStep.ReplaceAllFunc(doc, func([]byte) []byte {
			i++
			if i > len(blocks) {
				return nil
			}
			return []byte(blocks[i-1])
		})
		require.NoError(t, os.WriteFile(tourDoc, doc, 0o644))
	}
	want, err := os.ReadFile(tourGolden)
	require.NoError(t, err, "golden missing: go test ./ingest/cli -run TestTourGolden -update-tour")
	require.Equal(t, string(want), golden.String())

	doc, err := os.ReadFile(tourDoc)
	require.NoError(t, err)
	shown := tourStep.FindAllStringSubmatch(string(doc), -1)
	wantBlocks := tourStep.FindAllString(string(want), -1)
	require.Len(t, shown, len(wantBlocks), "docs/tour.md: one block per step")
	for i, m := range shown {
		require.Equal(t, fmt.Sprint(i+1), m[1], "docs/tour.md: step blocks in order")
		require.Equal(t, m[1], m[2], "docs/tour.md: step %s ends with its own marker", m[1])
		require.Equal(t, wantBlocks[i], m[0],
			"docs/tour.md step %d shows another output than the tour prints: go test ./ingest/cli -run TestTourGolden -update-tour", i+1)
	}
}
