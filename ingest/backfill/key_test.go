package backfill_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/backfill"
)

// TestParamsKey: workers with equal parameters share a pass (the
// repository's case aside); any parameter that changes the work changes
// the pass.
func TestParamsKey(t *testing.T) {
	t.Parallel()
	base := backfill.Params{Repo: "SemiAnalysisAI/InferenceX", Source: "github", Workflow: "run-sweep.yml", Branch: "main",
		Since: "2026-01-01T00:00:00Z"}
	key := func(p backfill.Params) string {
		spec, err := p.Spec()
		require.NoError(t, err)
		return spec.Key
	}
	same := base
	same.Repo = "semianalysisai/inferencex"
	require.Equal(t, key(base), key(same))
	for name, change := range map[string]func(*backfill.Params){
		"workflow": func(p *backfill.Params) { p.Workflow = "e2e-tests.yml" },
		"branch":   func(p *backfill.Params) { p.Branch = "" },
		"since":    func(p *backfill.Params) { p.Since = "2026-01-02T00:00:00Z" },
		"until":    func(p *backfill.Params) { p.Until = "2026-02-01T23:59:59Z" },
		"reingest": func(p *backfill.Params) { p.Reingest = true },
		"mapping":  func(p *backfill.Params) { p.Mapping = "0123456789abcdef" },
		"source":   func(p *backfill.Params) { p.Source = "runs"; p.RunsFile = "feed" },
		"repo":     func(p *backfill.Params) { p.Repo = "SemiAnalysisAI/Other" },
	} {
		p := base
		change(&p)
		require.NotEqual(t, key(base), key(p), name)
	}
}
