package store_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/fixtures/refdb"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/trace"
)

// An adopted trace holds the payloads our trace code computes from its
// stored blobs (aggregate statistics, chart series, request timeline,
// derived metrics), not the reference's: a NULL aggregate_stats becomes
// the computed one, not {}.
func TestAdoptComputesTracePayloads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, stats := refDatabase(t, refdb.Level017)
	_, err := pgxExec(ctx, db, `UPDATE agentic_trace_replay SET aggregate_stats = NULL WHERE id = 1`)
	require.NoError(t, err)
	st, err := store.Open(ctx, db, zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	plan, err := st.PlanAdopt(ctx)
	require.NoError(t, err)
	started := time.Now()
	res, err := st.Adopt(ctx, plan, store.AdoptOptions{Repo: "r/r", ToolVersion: "test"})
	require.NoError(t, err)
	t.Logf("adopt of %d traces took %s", stats.TraceReplays, time.Since(started))
	require.Zero(t, res.PayloadsKept)

	blob := func(digest []byte) []byte {
		var gz []byte
		require.NoError(t, st.Pool().QueryRow(ctx, `SELECT string_agg(data, ''::bytea ORDER BY seq) FROM trace_blob_chunks
			WHERE digest = $1`, digest).Scan(&gz))
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		require.NoError(t, err)
		var b bytes.Buffer
		_, err = b.ReadFrom(zr)
		require.NoError(t, err)
		return b.Bytes()
	}
	rows, err := st.Pool().Query(ctx, `SELECT t.id, t.profile_export_digest, t.server_metrics_json_digest,
		(SELECT c.framework FROM benchmark_results b JOIN configs c ON c.id = b.config_id WHERE b.trace_replay_id = t.id ORDER BY b.id LIMIT 1),
		(SELECT c.disagg FROM benchmark_results b JOIN configs c ON c.id = b.config_id WHERE b.trace_replay_id = t.id ORDER BY b.id LIMIT 1)
		FROM agentic_trace_replay t ORDER BY t.id`)
	require.NoError(t, err)
	type adopted struct {
		id          int64
		profile, sm []byte
		framework   *string
		disagg      *bool
	}
	traces, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (adopted, error) {
		var a adopted
		err := r.Scan(&a.id, &a.profile, &a.sm, &a.framework, &a.disagg)
		return a, err
	})
	require.NoError(t, err)
	require.Len(t, traces, int(stats.TraceReplays))
	for _, a := range traces {
		var pc trace.PointContext
		if a.framework != nil {
			pc = trace.PointContext{Framework: *a.framework, Disagg: *a.disagg}
		}
		profile, err := trace.ReadProfile(bytes.NewReader(blob(a.profile)))
		require.NoError(t, err)
		var sm *trace.ServerMetrics
		if a.sm != nil {
			raw := blob(a.sm)
			sm, err = trace.ReadServerMetrics(bytes.NewReader(raw), int64(len(raw)), pc)
			require.NoError(t, err)
		}
		der, err := trace.Derive(profile, sm)
		require.NoError(t, err)
		var timeline bytes.Buffer
		require.NoError(t, profile.WriteTimeline(&timeline))
		dm, err := json.Marshal(der.Metrics)
		require.NoError(t, err)
		var chart *string
		if der.ChartSeries != nil {
			c := string(der.ChartSeries)
			chart = &c
		}
		var same [4]bool
		var empty bool
		require.NoError(t, st.Pool().QueryRow(ctx, `SELECT aggregate_stats = $2::jsonb, chart_series IS NOT DISTINCT FROM $3::jsonb,
			request_timeline = $4::jsonb, derived_metrics = $5::jsonb, aggregate_stats = '{}'::jsonb
			FROM agentic_trace_replay WHERE id = $1`, a.id, string(der.AggregateStats), chart, timeline.String(), string(dm)).
			Scan(&same[0], &same[1], &same[2], &same[3], &empty))
		require.Equal(t, [4]bool{true, true, true, true}, same, "trace %d: aggregate_stats, chart_series, request_timeline, derived_metrics", a.id)
		require.False(t, empty, "trace %d", a.id)
	}
}

func pgxExec(ctx context.Context, db, sql string) (int64, error) {
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, sql)
	return tag.RowsAffected(), err
}

// A trace whose profile our trace code cannot read keeps the reference's
// payloads (a NULL aggregate_stats as {}), counted; the adopt goes on.
func TestAdoptKeepsUnreadableTracePayloads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := refDatabase(t, refdb.Level017)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err := zw.Write([]byte("not a profile record\n"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	conn, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `UPDATE agentic_trace_replay SET profile_export_jsonl_gz = $1, aggregate_stats = NULL WHERE id = 2`, gz.Bytes())
	require.NoError(t, err)
	var chart string
	require.NoError(t, conn.QueryRow(ctx, `SELECT chart_series::text FROM agentic_trace_replay WHERE id = 2`).Scan(&chart))

	st, err := store.Open(ctx, db, zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	plan, err := st.PlanAdopt(ctx)
	require.NoError(t, err)
	res, err := st.Adopt(ctx, plan, store.AdoptOptions{Repo: "r/r", ToolVersion: "test"})
	require.NoError(t, err)
	require.Equal(t, int64(1), res.PayloadsKept)
	var empty, sameChart bool
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT aggregate_stats = '{}'::jsonb, chart_series = $1::jsonb
		FROM agentic_trace_replay WHERE id = 2`, chart).Scan(&empty, &sameChart))
	require.True(t, empty)
	require.True(t, sameChart)
}

// Adopt reads each of the reference's blobs through the client once: the
// one pass feeds both the digest and the payloads. A server metrics export
// whose size the reference recorded wrongly (or not at all) is read again,
// told its true size.
func TestAdoptReadsEachBlobOnce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, setup string
		again       string // the bytes read a second time
	}{
		{"recorded sizes", "", "SELECT 0::bigint"},
		{"a wrong recorded size", `UPDATE agentic_trace_replay SET server_metrics_json_uncompressed_size = 7 WHERE id = 1`,
			`SELECT octet_length(server_metrics_json_gz)::bigint FROM agentic_trace_replay WHERE id = 1`},
		{"no recorded size", `UPDATE agentic_trace_replay SET server_metrics_json_uncompressed_size = NULL WHERE id = 2`,
			`SELECT octet_length(server_metrics_json_gz)::bigint FROM agentic_trace_replay WHERE id = 2`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db, _ := refDatabase(t, refdb.Level017)
			conn, err := pgx.Connect(ctx, db)
			require.NoError(t, err)
			defer conn.Close(ctx)
			if tc.setup != "" {
				_, err = conn.Exec(ctx, tc.setup)
				require.NoError(t, err)
			}
			var stored, again int64
			require.NoError(t, conn.QueryRow(ctx, `SELECT sum(coalesce(octet_length(profile_export_jsonl_gz), 0)
				+ coalesce(octet_length(server_metrics_json_gz), 0) + coalesce(octet_length(server_metrics_csv), 0))
				FROM agentic_trace_replay`).Scan(&stored))
			require.Positive(t, stored)
			require.NoError(t, conn.QueryRow(ctx, tc.again).Scan(&again))

			st, err := store.Open(ctx, db, zaptest.NewLogger(t))
			require.NoError(t, err)
			defer st.Close()
			plan, err := st.PlanAdopt(ctx)
			require.NoError(t, err)
			res, err := st.Adopt(ctx, plan, store.AdoptOptions{Repo: "r/r", ToolVersion: "test"})
			require.NoError(t, err)
			require.Equal(t, stored+again, res.BlobBytesRead)
			require.Zero(t, res.PayloadsKept)
		})
	}
}

// A trace the reference stored without a profile export (only its server
// metrics) is adopted without one: it keeps its id, its rows' links and
// the reference's payloads (counted), and the dashboard gives back a NULL
// profile and size, as the reference's table had them.
func TestAdoptTraceWithoutProfile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, stats := refDatabase(t, refdb.Level017)
	conn, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `UPDATE agentic_trace_replay SET profile_export_jsonl_gz = NULL, profile_export_uncompressed_size = NULL
		WHERE id = 3`)
	require.NoError(t, err)
	var stats3, chart3, metricsGz string
	require.NoError(t, conn.QueryRow(ctx, `SELECT aggregate_stats::text, chart_series::text, encode(sha256(server_metrics_json_gz), 'hex')
		FROM agentic_trace_replay WHERE id = 3`).Scan(&stats3, &chart3, &metricsGz))

	st, err := store.Open(ctx, db, zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()
	plan, err := st.PlanAdopt(ctx)
	require.NoError(t, err)
	require.Empty(t, plan.Refusals)
	require.Equal(t, int64(1), plan.TracesWithoutProfile)
	res, err := st.Adopt(ctx, plan, store.AdoptOptions{Repo: "r/r", ToolVersion: "test"})
	require.NoError(t, err)
	require.Equal(t, int64(1), res.PayloadsKept)
	require.Equal(t, stats.TraceReplays, res.Rows["agentic_trace_replay"])

	var noProfile, noSize, sameStats, sameChart, sameMetrics bool
	var linked int64
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT d.profile_export_jsonl_gz IS NULL, d.profile_export_uncompressed_size IS NULL,
		d.aggregate_stats = $1::jsonb, d.chart_series = $2::jsonb, encode(sha256(d.server_metrics_json_gz), 'hex') = $3,
		(SELECT count(*) FROM benchmark_results b WHERE b.trace_replay_id = 3)
		FROM dashboard.agentic_trace_replay d WHERE d.id = 3`, stats3, chart3, metricsGz).
		Scan(&noProfile, &noSize, &sameStats, &sameChart, &sameMetrics, &linked))
	require.Equal(t, []bool{true, true, true, true, true}, []bool{noProfile, noSize, sameStats, sameChart, sameMetrics})
	require.Equal(t, int64(1), linked)
}
