package store

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

// TestComparePoints: the impact's points come in the order its query
// sorted them in before the sort moved to Go: config, then type, lengths
// (a NULL length last), offload mode, recipe (a NULL recipe first),
// concurrency, row id; a deleted row, which has no key, after its
// config's other rows, by row id.
func TestComparePoints(t *testing.T) {
	t.Parallel()
	n := func(v int) *int { return &v }
	s := func(v string) *string { return &v }
	want := []schema.CurvePoint{
		{ResultID: 9, ConfigID: 1, BenchmarkType: "agentic_traces", Conc: 64},
		{ResultID: 8, ConfigID: 1, BenchmarkType: "single_turn", ISL: n(1024), OSL: n(1024), OffloadMode: "off", Conc: 4},
		{ResultID: 3, ConfigID: 1, BenchmarkType: "single_turn", ISL: n(1024), OSL: n(1024), OffloadMode: "off", Conc: 8},
		{ResultID: 2, ConfigID: 1, BenchmarkType: "single_turn", ISL: n(1024), OSL: n(1024), OffloadMode: "off",
			RecipeFingerprint: s("a1"), Conc: 4},
		{ResultID: 1, ConfigID: 1, BenchmarkType: "single_turn", ISL: n(1024), OSL: n(1024), OffloadMode: "on", Conc: 4},
		{ResultID: 7, ConfigID: 1, BenchmarkType: "single_turn", ISL: n(1024), OSL: n(8192), OffloadMode: "off", Conc: 4},
		{ResultID: 6, ConfigID: 1, BenchmarkType: "single_turn", ISL: n(1024), OffloadMode: "off", Conc: 4},
		{ResultID: 4, ConfigID: 1, BenchmarkType: "single_turn", ISL: n(8192), OSL: n(1024), OffloadMode: "off", Conc: 4},
		{ResultID: 12, ConfigID: 1, BenchmarkType: "single_turn", ISL: n(8192), OSL: n(1024), OffloadMode: "off", Conc: 4},
		{ResultID: 5, ConfigID: 1, Deleted: true},
		{ResultID: 11, ConfigID: 1, Deleted: true},
		{ResultID: 10, ConfigID: 2, BenchmarkType: "single_turn", ISL: n(1024), OSL: n(1024), OffloadMode: "off", Conc: 1},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		got := slices.Clone(want)
		rng.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		slices.SortFunc(got, comparePoints)
		require.Equal(t, want, got)
	}
}
