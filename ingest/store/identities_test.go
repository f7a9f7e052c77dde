package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// The identities the SQL and the Go code share each have one Go type
// (schema.CurveScope, schema.Config, schema.PointValues); these tests hold
// their SQL counterparts to them, so that neither drifts alone.
func TestIdentitiesMatchTheSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgtest.New(t))
	db := st.Pool()
	isl, osl := 1024, 8192

	t.Run("curve scope", func(t *testing.T) {
		for _, tc := range []struct {
			args string
			want schema.CurveScope
		}{
			{`'m', 'h', 'f', 'p', 'single_turn', 1024, 8192, 'mtp', true, NULL`,
				schema.CurveScope{Model: "m", Hardware: "h", Framework: "f", Precision: "p", BenchmarkType: "single_turn",
					ISL: &isl, OSL: &osl, SpecMethod: "mtp", Disagg: true, OffloadMode: "off"}},
			{`'m', 'h', 'f', 'p', 'agentic_traces', NULL, NULL, 'mtp', true, 'on'`,
				schema.CurveScope{Model: "m", Hardware: "h", Framework: "f", Precision: "p", BenchmarkType: "agentic_traces"}},
		} {
			var scope string
			require.NoError(t, db.QueryRow(ctx, `SELECT benchmark_curve_scope(`+tc.args+`)::text`).Scan(&scope))
			var got schema.CurveScope
			require.NoError(t, json.Unmarshal([]byte(scope), &got))
			require.Equal(t, tc.want, got)
			// Go's encoding is the function's value, and each position the
			// SQL reads (curve_scope->>i) holds the field of that name.
			enc, err := json.Marshal(got)
			require.NoError(t, err)
			var same bool
			require.NoError(t, db.QueryRow(ctx, `SELECT benchmark_curve_scope(`+tc.args+`) = $1::jsonb`, string(enc)).Scan(&same))
			require.True(t, same, "%s", enc)
			text := func(i int) (v *string) {
				require.NoError(t, db.QueryRow(ctx, fmt.Sprintf(`SELECT benchmark_curve_scope(%s)->>%d`, tc.args, i)).Scan(&v))
				return v
			}
			require.Equal(t, tc.want.SpecMethod, *text(schema.ScopeSpecMethod))
			require.Equal(t, fmt.Sprint(tc.want.Disagg), *text(schema.ScopeDisagg))
			require.Equal(t, tc.want.OffloadMode, *text(schema.ScopeOffloadMode))
			if tc.want.ISL != nil {
				require.Equal(t, fmt.Sprint(*tc.want.ISL), *text(schema.ScopeISL))
				require.Equal(t, fmt.Sprint(*tc.want.OSL), *text(schema.ScopeOSL))
			} else {
				require.Nil(t, text(schema.ScopeISL))
			}
		}
	})

	t.Run("config natural key", func(t *testing.T) {
		var cols []string
		require.NoError(t, db.QueryRow(ctx, `SELECT array_agg(a.attname::text ORDER BY k.n)
			FROM pg_constraint c CROSS JOIN unnest(c.conkey) WITH ORDINALITY AS k (attnum, n)
			JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
			WHERE c.conname = 'configs_natural_key'`).Scan(&cols))
		require.Equal(t, schema.ConfigKeyColumns(), cols)
	})

	t.Run("impact values", func(t *testing.T) {
		var out []string
		require.NoError(t, db.QueryRow(ctx, `SELECT array_agg(a.n ORDER BY a.i)
			FROM pg_proc p CROSS JOIN unnest(p.proargnames, p.proargmodes) WITH ORDINALITY AS a (n, m, i)
			WHERE p.proname = 'benchmark_impact_values' AND a.m = 't'`).Scan(&out))
		require.Equal(t, schema.PointValueMetrics(), out, "benchmark_impact_values' columns")
		var kept []string
		require.NoError(t, db.QueryRow(ctx, `SELECT array_agg(column_name::text ORDER BY ordinal_position)
			FROM information_schema.columns
			WHERE table_name = 'latest_benchmark_points' AND column_name = ANY($1) AND data_type = 'double precision'`,
			schema.PointValueMetrics()).Scan(&kept))
		require.Equal(t, schema.PointValueMetrics(), kept, "latest_benchmark_points keeps each value")
	})
}
