package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

func TestPowerWarningsRendered(t *testing.T) {
	s := &schema.Summary{Status: schema.StatusSucceeded, Failures: []schema.Failure{}, Notes: []string{},
		PowerWarnings: []schema.PowerWarning{{Artifact: "gpu_metrics_x", File: "gpu_metrics.csv", Field: "avg_power_w",
			Published: 400, Measured: 500, RelDiff: 0.25}}}
	want := "gpu_metrics_x / gpu_metrics.csv: avg_power_w published 400, telemetry 500 (25.0 %)"
	md := Markdown(s)
	require.Contains(t, md, "<details><summary>1 power warning</summary>")
	require.Contains(t, md, "- "+strings.ReplaceAll(want, "_", "\\_"))
	require.Contains(t, Text(s), "power warnings (1):\n  "+want+"\n")
	s.PowerWarnings = nil
	require.NotContains(t, Markdown(s), "power warning")
	require.NotContains(t, Text(s), "power warning")
}

func TestPowerRowInvariant(t *testing.T) {
	s := &schema.Summary{Rows: schema.Rows{Power: schema.Counts{New: 2, Failed: 1}}}
	s.Details.PowerSeriesRead = 3
	require.NoError(t, CheckInvariant(s))
	s.Details.PowerSeriesRead = 4
	require.ErrorIs(t, CheckInvariant(s), ErrInvariant)
}
