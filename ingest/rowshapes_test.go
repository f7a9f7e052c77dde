package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// Each row shape the spec describes (single-node v1, multinode v2, AgentX
// v3 aggregates, power-valid and power-invalid rows of the newer producer)
// is ingested into PostgreSQL; the stored rows, with their resolved config,
// are compared with a golden file.
func TestRowShapesAsStored(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join("testdata", "rows", "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 6)
	for i, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		body, err := os.ReadFile(f)
		require.NoError(t, err)
		writeFile(t, filepath.Join(dir, "bmk_"+name, "agg_"+name+".json"), string(body))
		// No listing: upload order is inferred from modification times,
		// which are set so that later files are newer (valid_power wins).
		setModTime(t, filepath.Join(dir, "bmk_"+name), fmt.Sprintf("2026-11-20T08:%02d:00Z", i))
	}
	sum := e.mustIngest(dir, ingest.Config{Run: RunID(555, 1)})
	// valid_power and missing_power are the same point (the producer's two
	// outcomes of one run): one owns it, the other is a stale copy.
	require.Equal(t, schema.Counts{New: 5, Skipped: 1}, sum.Rows.Benchmark)

	rows, err := e.pool().Query(context.Background(), `
		SELECT json_build_object(
			'source', b.source_artifact, 'row', b.source_row,
			'config', to_jsonb(c) - 'id', 'benchmark_type', b.benchmark_type,
			'isl', b.isl, 'osl', b.osl, 'conc', b.conc, 'offload_mode', b.offload_mode,
			'recipe_fingerprint', b.recipe_fingerprint, 'image', b.image, 'date', b.date,
			'metrics', b.metrics, 'workers', b.workers,
			'power_invalid_reasons', b.power_invalid_reasons, 'power_audit', b.power_audit)
		FROM benchmark_results b JOIN configs c ON c.id = b.config_id
		ORDER BY b.source_artifact`)
	require.NoError(t, err)
	var stored []json.RawMessage
	for rows.Next() {
		var r json.RawMessage
		require.NoError(t, rows.Scan(&r))
		stored = append(stored, r)
	}
	require.NoError(t, rows.Err())
	got, err := json.MarshalIndent(stored, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	golden := filepath.Join("testdata", "row_shapes.golden.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got), "rerun with -update and review the diff")
}
