package ingest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/ingest/overrides"
	"github.com/inferencex/ingest/ingest/store"
)

func benchDeps(tb testing.TB, st *store.Store) ingest.Deps {
	return newDeps(tb, st, zap.NewNop(), time.Now)
}

func newDeps(tb testing.TB, st *store.Store, log *zap.Logger, now func() time.Time) ingest.Deps {
	tb.Helper()
	cat, err := catalog.Default()
	require.NoError(tb, err)
	ov, err := overrides.Load()
	require.NoError(tb, err)
	return ingest.Deps{Store: ingest.AdaptStore[*store.RunTx](st), Catalog: cat, Normalizer: benchmark.NewNormalizer(cat),
		Overrides: ov, Log: log, Now: now}
}
