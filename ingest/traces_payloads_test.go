package ingest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/schema"
)

// payloadsOf reads every sidecar's three payloads, keyed by digest.
func payloadsOf(t *testing.T, e *env) map[string][3]string {
	t.Helper()
	rows, err := e.pool().Query(context.Background(),
		`SELECT digest, aggregate_stats::text, coalesce(chart_series::text, ''), coalesce(request_timeline::text, '')
		FROM agentic_trace_replay`)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string][3]string{}
	for rows.Next() {
		var d []byte
		var p [3]string
		require.NoError(t, rows.Scan(&d, &p[0], &p[1], &p[2]))
		out[string(d)] = p
	}
	require.NoError(t, rows.Err())
	return out
}

// A sidecar stored by an older build (payloads at version 1, the timeline
// as a gzip blob) is found stale by the next ingest of a run carrying it:
// its payloads are recomputed in place, the rows stay linked to it (their
// trace counts as a duplicate), and a further rerun changes nothing.
func TestTracesStalePayloadsRecomputedOnRerun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := agentxTree(t, agentxPoints())
	first := e.mustIngest(dir, ingest.Config{})
	require.EqualValues(t, 4, first.Details.TraceSidecarsNew)
	fresh := payloadsOf(t, e)
	require.Len(t, fresh, 4)
	ids := e.count(`SELECT sum(id) FROM agentic_trace_replay`)

	// What an older build left: its own payload shapes at version 1 and a
	// timeline blob (any stored blob stands in for it).
	_, err := e.pool().Exec(context.Background(), `UPDATE agentic_trace_replay SET
		aggregate_stats = '{"version": 1, "records": {"recordsTotal": 1}}',
		chart_series = '{"version": 1, "adapter": "vllm"}',
		request_timeline = NULL,
		request_timeline_digest = profile_export_digest, request_timeline_size = 1`)
	require.NoError(t, err)
	// One row already current but for its chart version.
	_, err = e.pool().Exec(context.Background(), `UPDATE agentic_trace_replay SET aggregate_stats = '{"version": 10}',
		request_timeline_digest = NULL, request_timeline_size = NULL, chart_series = '{"version": 19}'
		WHERE id = (SELECT min(id) FROM agentic_trace_replay)`)
	require.NoError(t, err)
	// One left by the build before this one: current but for its timeline
	// (version 5, without the replay lanes of version 6).
	_, err = e.pool().Exec(context.Background(), `UPDATE agentic_trace_replay SET aggregate_stats = '{"version": 10}',
		request_timeline_digest = NULL, request_timeline_size = NULL, chart_series = '{"version": 20}',
		request_timeline = '{"version": 5, "requests": []}'
		WHERE id = (SELECT max(id) FROM agentic_trace_replay)`)
	require.NoError(t, err)

	second := e.mustIngest(dir, ingest.Config{})
	checkTraceInvariant(t, second)
	require.Equal(t, schema.Counts{Duplicate: 4, Skipped: 1, Failed: 1}, second.Rows.Trace)
	require.Zero(t, second.Details.TraceSidecarsNew)
	require.Zero(t, second.Details.TraceBlobsNew, "the stored files are not sent again")
	require.True(t, hasNote(second, "4 stored trace(s) held derived payloads of an older build: recomputed"), "%v", second.Notes)
	require.Equal(t, fresh, payloadsOf(t, e), "the payloads a first ingest writes")
	require.Equal(t, 0, e.count(`SELECT count(*) FROM agentic_trace_replay WHERE request_timeline_digest IS NOT NULL`))
	require.Equal(t, ids, e.count(`SELECT sum(id) FROM agentic_trace_replay`), "recomputed in place")
	require.Equal(t, 4, e.count(`SELECT count(*) FROM benchmark_results WHERE trace_replay_id IS NOT NULL`))

	tables := append([]string{"trace_blobs", "trace_blob_chunks", "agentic_trace_replay"}, dataTables...)
	before := e.checksums(tables...)
	third := e.mustIngest(dir, ingest.Config{})
	require.False(t, hasNote(third, "held derived payloads of an older build"))
	require.Equal(t, before, e.checksums(tables...), "current payloads are not recomputed")
}

// The dashboard's view of the traces: the reference's columns and types,
// the payloads at the dashboard's versions, and no way to write through it
// (the dashboard's write-back of a recomputed payload fails, for any role).
func TestDashboardAgenticTraceReplayView(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mustIngest(agentxTree(t, agentxPoints()), ingest.Config{})
	ctx := context.Background()

	rows, err := e.pool().Query(ctx, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = 'dashboard' AND table_name = 'agentic_trace_replay' ORDER BY ordinal_position`)
	require.NoError(t, err)
	var cols [][2]string
	for rows.Next() {
		var c [2]string
		require.NoError(t, rows.Scan(&c[0], &c[1]))
		cols = append(cols, c)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, [][2]string{{"id", "bigint"}, {"profile_export_jsonl_gz", "bytea"}, {"profile_export_uncompressed_size", "bigint"},
		{"server_metrics_json_gz", "bytea"}, {"server_metrics_json_uncompressed_size", "bigint"}, {"server_metrics_csv_size", "bigint"},
		{"aggregate_stats", "jsonb"}, {"chart_series", "jsonb"}, {"request_timeline", "jsonb"},
		{"created_at", "timestamp with time zone"}}, cols)

	var updatable, insertable string
	require.NoError(t, e.pool().QueryRow(ctx, `SELECT is_updatable, is_insertable_into FROM information_schema.views
		WHERE table_schema = 'dashboard' AND table_name = 'agentic_trace_replay'`).Scan(&updatable, &insertable))
	require.Equal(t, [2]string{"NO", "NO"}, [2]string{updatable, insertable})
	// The statements the dashboard's write-back issues, as the owner.
	for _, col := range []string{"aggregate_stats", "chart_series", "request_timeline"} {
		_, err := e.pool().Exec(ctx, `UPDATE dashboard.agentic_trace_replay SET `+col+` = '{}'::jsonb WHERE id = (SELECT min(id) FROM agentic_trace_replay)`)
		require.ErrorContains(t, err, "cannot update view", col)
	}

	// The dashboard's version checks find every payload current, through
	// the view and by the query the timeline reader runs.
	require.Equal(t, 4, e.count(`SELECT count(*) FROM dashboard.agentic_trace_replay
		WHERE (aggregate_stats->>'version')::int = 10 AND (chart_series->>'version')::int = 20
		AND (request_timeline->>'version')::int = 6`))
	var timeline json.RawMessage
	var hasBlob bool
	require.NoError(t, e.pool().QueryRow(ctx, `SELECT (atr.profile_export_jsonl_gz IS NOT NULL), atr.request_timeline
		FROM benchmark_results br JOIN dashboard.agentic_trace_replay atr ON atr.id = br.trace_replay_id
		ORDER BY br.id LIMIT 1`).Scan(&hasBlob, &timeline))
	require.True(t, hasBlob)
	var tl struct {
		Version  int              `json:"version"`
		Requests []map[string]any `json:"requests"`
	}
	require.NoError(t, json.Unmarshal(timeline, &tl))
	require.Equal(t, 6, tl.Version)
	require.NotEmpty(t, tl.Requests)
	for _, k := range []string{"cid", "ri", "ti", "wid", "ad", "phase", "credit", "start", "ack", "end", "ttftMs", "tpotMs", "isl", "osl", "cancelled"} {
		require.Contains(t, tl.Requests[0], k)
	}
	// The compact chart projection the dashboard runs in SQL casts isl and
	// osl to int: every stored value takes the cast.
	require.Positive(t, e.count(`SELECT count(*) FROM dashboard.agentic_trace_replay atr,
		jsonb_array_elements(atr.request_timeline->'requests') r WHERE (r->>'isl')::int >= 0 OR (r->>'isl') IS NULL`))
}
