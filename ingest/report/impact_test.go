package report

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

// impactSummary is a successful ingest whose impact is the golden of the
// narrow replacement (ingest/impact's hand-checked run pair: run 200
// replacing run 100's 1k/1k curve by three points and re-tuning its AgentX
// curve).
func impactSummary(t *testing.T) *schema.Summary {
	t.Helper()
	raw, err := os.ReadFile("../impact/testdata/narrow_replacement.json")
	require.NoError(t, err)
	s := exampleSummary()
	s.Impact = &schema.Impact{}
	require.NoError(t, json.Unmarshal(raw, s.Impact))
	return s
}

// TestImpactGolden: the section in Markdown (a <details> block, coverage
// loss first, the acknowledging flag) and text, and the headline's ⚠️.
func TestImpactGolden(t *testing.T) {
	s := impactSummary(t)
	md := Markdown(s)
	requireGolden(t, "markdown_impact.golden", md)
	require.Contains(t, md, "> [!WARNING]\n> Ingest report — ⚠️ Results ingested into the production database. Coverage loss on 2 published curves.\n")
	require.Contains(t, md, "<details><summary>Dashboard impact: 2 curves of 2 touched change — 0 gained, 7 replaced, 6 dropped, 0 kept; coverage loss on 2 curves.</summary>")
	require.Contains(t, md, "`--accept-coverage-loss all`", "a summary stored without a loss token is acknowledged with all")
	require.Contains(t, md, "| 4 | tp8 | 100 → 110 (+10.0 %) | 40.0 → 44.0 (+10.0 %) | 50.0 → 52.0 (+4.0 %) | 10.0 → 9.50 (-5.0 %) | 1000 → 950 (-5.0 %) |")
	require.Contains(t, md, "| 2 → 8 (by interactivity) | tp8 |", "the match is named only when it is not by concurrency")
	require.Contains(t, md, "Ingest 报告 — ⚠️ 结果已写入 production 数据库。 2 条已发布曲线覆盖缩小。", "the Chinese headline warns too")
	s.Impact.LossToken = "loss-0123456789"
	require.Contains(t, Markdown(s), "`--accept-coverage-loss loss-0123456789` (or `all`)")
	require.Contains(t, md, "interactivity 7 → 3 (3 new on it, 7 lost: 3 dominated, 4 not, ⚠️ fewer than 5 frontier points)")
	txt := Text(s)
	requireGolden(t, "text_impact.golden", txt)
	require.True(t, strings.HasPrefix(txt, "Ingest report — ⚠️ Results ingested into the production database. Coverage loss on 2 published curves."))
	require.NoError(t, CheckInvariant(s))

	// Acknowledged: no ⚠️ in the headline, the loss still listed.
	s.Impact.Accepted = []string{s.Impact.Curves[0].Key, s.Impact.Curves[1].Key}
	s.Impact.Curves[0].Accepted, s.Impact.Curves[1].Accepted = true, true
	md = Markdown(s)
	require.Contains(t, md, "\nIngest report — ✅ Results ingested into the production database.\n")
	require.NotContains(t, md, "Action needed")
	require.Contains(t, md, "(acknowledged)")
	require.NotContains(t, md, "--accept-coverage-loss")
}

// TestImpactNothingChanges: a rerun, and a run whose curves keep every
// point, say so in one line.
func TestImpactNothingChanges(t *testing.T) {
	s := exampleSummary()
	s.Impact = &schema.Impact{Status: schema.ImpactUnchanged}
	require.Contains(t, Markdown(s), "\nDashboard impact: nothing changes.\n")
	require.Contains(t, Text(s), "\nDashboard impact: nothing changes.\n")
	s.Impact.CurvesTouched = 3
	require.Contains(t, Text(s), "Dashboard impact: nothing changes (3 curves touched, every point as before).\n")
	require.NotContains(t, Markdown(s), "<details><summary>Dashboard impact")
}

// TestCheckImpact: counts that do not match the rows written fail the
// invariant.
func TestCheckImpact(t *testing.T) {
	s := impactSummary(t)
	require.NoError(t, CheckImpact(s))
	s.Impact.RowsAdded++
	require.ErrorIs(t, CheckImpact(s), ErrInvariant)
	s = impactSummary(t)
	s.Impact.Curves[0].Kept = 1
	require.ErrorContains(t, CheckImpact(s), "curve dsr1/b200/sglang/fp8/1024x1024/none/agg/off: 8 → 3 points")
	s = impactSummary(t)
	s.Impact.PointsDropped, s.Impact.RowsRemoved = 5, 12
	require.ErrorContains(t, CheckImpact(s), "the listed curves have")
}
