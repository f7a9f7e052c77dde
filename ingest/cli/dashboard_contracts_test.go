package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// The contracts of the dashboard's reads (docs/dashboard-schema.md, "Every
// read of the site"): the relations the site's queries name, resolved as
// its reader role resolves them (search_path dashboard, public), with the
// columns they use and the types the site reads; then the reads
// themselves, as the site sends them, with what they return on the demo
// run. A helper that makes another read work adds its relation and its
// read here; a contract that breaks fails TestDashboardContracts.

// relationContracts: relation → "column type" of every column a read uses
// (format_type names).
var relationContracts = map[string][]string{
	"configs": {"id integer", "hardware text", "framework text", "model text", "precision text", "spec_method text",
		"disagg boolean", "is_multinode boolean", "prefill_tp smallint", "prefill_ep smallint", "prefill_dp_attention boolean",
		"prefill_num_workers smallint", "decode_tp smallint", "decode_ep smallint", "decode_dp_attention boolean",
		"decode_num_workers smallint", "num_prefill_gpu smallint", "num_decode_gpu smallint"},
	"workflow_runs": {"id bigint", "github_run_id bigint", "run_attempt smallint", "name text", "conclusion text",
		"html_url text", "head_sha text", "created_at timestamp with time zone", "run_started_at timestamp with time zone",
		"date date", "append_only boolean"},
	"latest_workflow_runs": {"id bigint", "github_run_id bigint", "run_attempt smallint", "name text", "conclusion text",
		"html_url text", "head_sha text", "created_at timestamp with time zone", "run_started_at timestamp with time zone",
		"date date"},
	"benchmark_results": {"id bigint", "workflow_run_id bigint", "config_id integer", "benchmark_type text", "date date",
		"isl integer", "osl integer", "conc integer", "offload_mode text", "image text", "metrics jsonb", "workers jsonb",
		"error text", "trace_replay_id bigint", "server_log_id bigint", "recipe_fingerprint text"},
	"eval_results": {"id bigint", "workflow_run_id bigint", "config_id integer", "task text", "date date", "conc integer",
		"metrics jsonb"},
	"eval_samples": {"eval_result_id bigint", "doc_id integer", "prompt text", "target text", "response text",
		"passed boolean", "score numeric", "metrics jsonb", "data jsonb"},
	"availability": {"model text", "isl integer", "osl integer", "precision text", "hardware text", "framework text",
		"spec_method text", "disagg boolean", "benchmark_type text", "date date"},
	"changelog_entries": {"workflow_run_id bigint", "date date", "base_ref text", "head_ref text", "config_keys text[]",
		"description text", "pr_link text"},
	"run_stats":        {"workflow_run_id bigint", "date date", "hardware text", "n_success integer", "total integer"},
	"server_logs":      {"id bigint", "server_log text", "file_name text", "files_complete boolean"},
	"server_log_files": {"server_log_id bigint", "file_name text", "log_text text"},
	"run_datasets":     {"workflow_run_id bigint", "dataset_slug text"},
	"datasets": {"id text", "slug text", "label text", "variant text", "description text", "hf_url text", "license text",
		"conversation_count integer", "summary jsonb", "chart_data jsonb", "ingested_at timestamp with time zone"},
	"dataset_conversations": {"dataset_id text", "conv_id text", "models text[]", "num_turns integer",
		"num_subagent_groups integer", "total_in bigint", "total_out bigint", "total_cached bigint", "structure jsonb"},
	"agentic_trace_replay": {"id bigint", "profile_export_jsonl_gz bytea", "server_metrics_json_gz bytea",
		"aggregate_stats jsonb", "chart_series jsonb", "request_timeline jsonb"},
}

// demoFacts are the demo run's ids the reads are asked about.
type demoFacts struct {
	dir        string // the demo tree
	runID      int64  // GitHub run id
	evalResult int64  // the b200 qwen3.5 gsm8k result (1319 documents)
	agentic    int64  // the sglang conc 4 AgentX row: server log results/server.log + results/benchmark.log
	// disagg is the dynamo-sglang (disaggregated) conc 16 AgentX row.
	disagg    int64
	serverLog string // that server.log as the tree holds it
	// serverLogFile is its path in the tree.
	serverLogFile string
}

type readContract struct {
	read string // upstream file: function (docs/dashboard-schema.md)
	sql  string
	args func(f demoFacts) []any
	want func(t *testing.T, f demoFacts, rows []map[string]any)
}

var readContracts = []readContract{
	{read: "workflow-info.ts: getWorkflowRunsByDate", sql: `
    SELECT github_run_id, name, conclusion, run_attempt, html_url, to_char(created_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as created_at, date::text
    FROM latest_workflow_runs
    WHERE date = $1::date
      AND conclusion IS NOT NULL
    ORDER BY created_at ASC`,
		args: func(demoFacts) []any { return []any{"2026-11-20"} },
		want: func(t *testing.T, f demoFacts, rows []map[string]any) {
			require.Len(t, rows, 1)
			require.Equal(t, f.runID, rows[0]["github_run_id"])
			require.Equal(t, "success", rows[0]["conclusion"])
			require.Equal(t, int16(2), rows[0]["run_attempt"])
			require.Equal(t, "Run Sweep", rows[0]["name"])
		}},
	{read: "workflow-info.ts: getChangelogByDate", sql: `
    SELECT wr.github_run_id as workflow_run_id, cl.date::text, cl.base_ref, cl.head_ref, cl.config_keys, cl.description, cl.pr_link
    FROM changelog_entries cl
    JOIN latest_workflow_runs wr ON wr.id = cl.workflow_run_id
    WHERE cl.date = $1::date
    ORDER BY cl.date DESC`,
		args: func(demoFacts) []any { return []any{"2026-11-20"} },
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			require.Len(t, rows, 2)
			keys := []any{rows[0]["config_keys"], rows[1]["config_keys"]}
			require.ElementsMatch(t, []any{[]any{"qwen3.5-fp8-b200-sglang"}, []any{"dsr1-fp8-gb200-dynamo-sglang"}}, keys)
		}},
	{read: "workflow-info.ts: getRunConfigsByDate", sql: `
    SELECT DISTINCT wr.github_run_id,
      to_char(COALESCE(wr.run_started_at, wr.created_at), 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as run_started_at,
      wr.html_url, wr.head_sha, c.model, c.precision, c.hardware, c.framework, c.spec_method, c.disagg,
      br.benchmark_type, br.isl, br.osl
    FROM benchmark_results br
    JOIN configs c ON c.id = br.config_id
    JOIN latest_workflow_runs wr ON wr.id = br.workflow_run_id
    WHERE br.date = $1::date
      AND br.error IS NULL`,
		args: func(demoFacts) []any { return []any{"2026-11-20"} },
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			var got []string
			for _, r := range rows {
				got = append(got, r["hardware"].(string)+"/"+r["framework"].(string)+"/"+r["benchmark_type"].(string))
			}
			require.ElementsMatch(t, []string{"b200/sglang/single_turn", "b200/sglang/agentic_traces",
				"b200/vllm/agentic_traces", "gb200/dynamo-sglang/agentic_traces"}, got)
		}},
	{read: "workflow-info.ts: getAvailabilityData", sql: `
    SELECT a.model, a.isl, a.osl, a.precision, a.hardware, a.framework, a.spec_method, a.disagg, a.benchmark_type, a.date::text
    FROM availability a
    WHERE EXISTS (
      SELECT 1 FROM benchmark_results br
      JOIN configs c ON c.id = br.config_id
      JOIN latest_workflow_runs wr ON wr.id = br.workflow_run_id
      WHERE c.model = a.model AND c.hardware = a.hardware AND c.framework = a.framework AND c.precision = a.precision
        AND br.isl IS NOT DISTINCT FROM a.isl AND br.osl IS NOT DISTINCT FROM a.osl
        AND br.benchmark_type = a.benchmark_type AND br.date = a.date AND br.error IS NULL
        AND wr.conclusion IS NOT NULL)
    ORDER BY a.date ASC`,
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			var got []string
			for _, r := range rows {
				got = append(got, r["hardware"].(string)+"/"+r["framework"].(string)+"/"+r["benchmark_type"].(string))
			}
			require.ElementsMatch(t, []string{"b200/sglang/single_turn", "b200/sglang/agentic_traces",
				"b200/vllm/agentic_traces", "gb200/dynamo-sglang/agentic_traces"}, got)
		}},
	{read: "evaluations.ts: getAllEvalResults", sql: `
    SELECT er.id, er.config_id, c.hardware, c.model, er.task, er.date::text, er.conc, er.metrics,
      to_char(wr.created_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as timestamp, wr.html_url as run_url
    FROM eval_results er
    JOIN configs c ON c.id = er.config_id
    JOIN latest_workflow_runs wr ON wr.id = er.workflow_run_id
    ORDER BY er.date DESC, c.hardware`,
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			require.Len(t, rows, 3)
			for _, r := range rows {
				require.Equal(t, "gsm8k", r["task"])
				require.Contains(t, r["metrics"], "em_strict")
			}
		}},
	{read: "reliability.ts: getReliabilityStats", sql: `
    SELECT rs.hardware, rs.date::text, rs.n_success, rs.total
    FROM run_stats rs
    JOIN latest_workflow_runs wr ON wr.id = rs.workflow_run_id
    ORDER BY rs.date DESC`,
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			hw := map[string]int{}
			for _, r := range rows {
				hw[r["hardware"].(string)]++
				require.Equal(t, "2026-11-20", r["date"])
			}
			require.Len(t, hw, 10, "one row per GPU")
			for h, n := range hw {
				require.Equal(t, 1, n, h)
			}
		}},
	{read: "submissions.ts: getSubmissionVolume", sql: `
    SELECT br.date::text, c.hardware, COUNT(*)::int AS datapoints
    FROM benchmark_results br
    JOIN configs c ON c.id = br.config_id
    JOIN latest_workflow_runs wr ON wr.id = br.workflow_run_id
    WHERE br.error IS NULL
    GROUP BY br.date, c.hardware
    ORDER BY br.date ASC`,
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			got := map[string]int32{}
			for _, r := range rows {
				got[r["hardware"].(string)] = r["datapoints"].(int32)
			}
			require.Equal(t, map[string]int32{"b200": 11, "gb200": 1}, got)
		}},
	{read: "latest-images.ts: getLatestImages", sql: `
    SELECT DISTINCT ON (c.model, c.hardware, c.framework, c.precision, c.spec_method, lb.benchmark_type, lb.isl, lb.osl)
      c.model, c.hardware, c.framework, c.precision, c.spec_method, c.disagg, lb.isl, lb.osl, lb.benchmark_type, lb.image, lb.date::text
    FROM latest_benchmarks lb
    JOIN configs c ON c.id = lb.config_id
    WHERE lb.image IS NOT NULL
    ORDER BY c.model, c.hardware, c.framework, c.precision, c.spec_method, lb.benchmark_type, lb.isl, lb.osl, lb.date DESC`,
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			got := map[string]string{}
			for _, r := range rows {
				got[r["hardware"].(string)+"/"+r["framework"].(string)+"/"+r["benchmark_type"].(string)] = r["image"].(string)
				require.Equal(t, "2026-11-20", r["date"])
			}
			require.Len(t, got, 4)
			require.Equal(t, "lmsysorg/sglang:v0.5.14-cu130", got["b200/sglang/single_turn"])
		}},
	{read: "eval-samples.ts: getEvalSamples (filter failed)", sql: `
    select doc_id, prompt, target, response, data->'resps'->0->>0 as raw_response, data->'arguments' as arguments_data,
           passed, score, metrics
    from eval_samples
    where eval_result_id = $1 and passed is false
    order by doc_id
    limit 5 offset 0`,
		args: func(f demoFacts) []any { return []any{f.evalResult} },
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			require.Len(t, rows, 5)
			for _, r := range rows {
				require.Equal(t, false, r["passed"])
				require.NotEmpty(t, r["prompt"])
			}
		}},
	{read: "eval-samples.ts: getEvalSampleOffset", sql: `
    select count(*) filter (where doc_id < $2)::int as offset, count(*) filter (where doc_id = $2)::int as matches
    from eval_samples
    where eval_result_id = $1`,
		args: func(f demoFacts) []any { return []any{f.evalResult, 700} },
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			require.Equal(t, []map[string]any{{"offset": int32(700), "matches": int32(1)}}, rows,
				"one row per document: the site returns the offset only when matches = 1")
		}},
	{read: "server-logs.ts: getServerLog (primary)", sql: `
      with selected_log as (
        select sl.file_name, sl.server_log as log_text, 0 as priority
        from benchmark_results br join server_logs sl on sl.id = br.server_log_id
        where br.id = $1 and ($2::text is null or sl.file_name = $2)
        union all
        select slf.file_name, slf.log_text, 1 as priority
        from benchmark_results br join server_log_files slf on slf.server_log_id = br.server_log_id
        where br.id = $1 and $2::text is not null and slf.file_name = $2
        order by priority
        limit 1
      )
      select log_text from selected_log`,
		args: func(f demoFacts) []any { return []any{f.agentic, nil} },
		want: func(t *testing.T, f demoFacts, rows []map[string]any) {
			require.Equal(t, []map[string]any{{"log_text": f.serverLog}}, rows, "the file's text, whole")
		}},
	{read: "server-logs.ts: getServerLog (a named file)", sql: `
      with selected_log as (
        select sl.file_name, sl.server_log as log_text, 0 as priority
        from benchmark_results br join server_logs sl on sl.id = br.server_log_id
        where br.id = $1 and ($2::text is null or sl.file_name = $2)
        union all
        select slf.file_name, slf.log_text, 1 as priority
        from benchmark_results br join server_log_files slf on slf.server_log_id = br.server_log_id
        where br.id = $1 and $2::text is not null and slf.file_name = $2
        order by priority
        limit 1
      )
      select log_text from selected_log`,
		args: func(f demoFacts) []any { return []any{f.agentic, "results/benchmark.log"} },
		want: func(t *testing.T, f demoFacts, rows []map[string]any) {
			b, err := os.ReadFile(filepath.Join(filepath.Dir(f.serverLogPath()), "benchmark.log"))
			require.NoError(t, err)
			require.Equal(t, []map[string]any{{"log_text": string(b)}}, rows)
		}},
	{read: "server-logs.ts: getServerLogFileNames", sql: `
      select file_name from (
        select sl.file_name, 0 as priority
        from benchmark_results br join server_logs sl on sl.id = br.server_log_id
        where br.id = $1
        union all
        select slf.file_name, 1 as priority
        from benchmark_results br join server_logs sl on sl.id = br.server_log_id
        join server_log_files slf on slf.server_log_id = sl.id
        where br.id = $1 and slf.file_name <> sl.file_name
      ) files
      order by priority, file_name`,
		args: func(f demoFacts) []any { return []any{f.agentic} },
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			require.Equal(t, []map[string]any{{"file_name": "results/server.log"}, {"file_name": "results/benchmark.log"}}, rows)
		}},
	{read: "server-logs.ts: getServerLogChunk", sql: `
      with selected_log as (
        select sl.file_name, substring(sl.server_log from $2::integer for $3::integer) as log_text,
          substring(sl.server_log from $4::integer for 1) <> '' as has_more, 0 as priority
        from benchmark_results br join server_logs sl on sl.id = br.server_log_id
        where br.id = $1
        order by priority
        limit 1
      )
      select file_name, log_text, char_length(log_text) as char_count, has_more from selected_log`,
		args: func(f demoFacts) []any { return []any{f.agentic, 11, 40, 51} }, // offset 10, limit 40
		want: func(t *testing.T, f demoFacts, rows []map[string]any) {
			require.Len(t, rows, 1)
			require.Equal(t, "results/server.log", rows[0]["file_name"])
			require.Equal(t, f.serverLog[10:50], rows[0]["log_text"])
			require.Equal(t, true, rows[0]["has_more"])
		}},
	{read: "server-logs.ts: getServerLogAvailability", sql: `
    select br.id from benchmark_results br
    where br.id = any($1::bigint[]) and br.server_log_id is not null`,
		args: func(f demoFacts) []any { return []any{[]int64{f.agentic, 1}} },
		want: func(t *testing.T, f demoFacts, rows []map[string]any) {
			require.Equal(t, []map[string]any{{"id": f.agentic}}, rows)
		}},
	{read: "agentic-memory.ts: getAgenticMemory", sql: `
    select br.id, c.model, c.framework, c.hardware, br.date::text, br.image, br.conc, c.disagg, br.metrics
    from benchmark_results br join configs c on c.id = br.config_id
    where br.id = $1 and br.benchmark_type = 'agentic_traces'`,
		args: func(f demoFacts) []any { return []any{f.agentic} },
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			require.Len(t, rows, 1)
			require.Equal(t, "sglang", rows[0]["framework"])
			m := rows[0]["metrics"].(map[string]any)
			require.EqualValues(t, 4382208, m["kv_cache_pool_tokens"], "the ingest's: the worker log's max_total_num_tokens (issue 25)")
			require.EqualValues(t, 4274346, m["published_kv_cache_pool_tokens"], "the producer's, traceable")
		}},
	{read: "trace-availability.ts: getTraceAvailability", sql: `
    select br.id from benchmark_results br
    join agentic_trace_replay atr on atr.id = br.trace_replay_id
    where br.id = any($1::bigint[]) and atr.profile_export_jsonl_gz is not null`,
		args: func(f demoFacts) []any { return []any{[]int64{f.agentic}} },
		want: func(t *testing.T, f demoFacts, rows []map[string]any) {
			require.Equal(t, []map[string]any{{"id": f.agentic}}, rows)
		}},
	{read: "request-timeline.ts: getRequestTimeline", sql: `
    select
      atr.id as trace_replay_id,
      (atr.profile_export_jsonl_gz is not null) as has_blob,
      (atr.request_timeline->>'version')::int as timeline_version,
      pg_column_size(atr.request_timeline)::int as timeline_storage_bytes,
      case
        when pg_column_size(atr.request_timeline) <= $2
        then atr.request_timeline
        else null
      end as request_timeline
    from benchmark_results br
    join agentic_trace_replay atr on atr.id = br.trace_replay_id
    where br.id = $1`,
		args: func(f demoFacts) []any { return []any{f.agentic, 16 * 1024 * 1024} },
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			// The site's fast path: version 6 (REQUEST_TIMELINE_VERSION of
			// compute-request-timeline.ts, 44a8289). Sample values of the
			// conc-4 profile (68 timed records, each with its own
			// x_correlation_id), by the reference's formulas: origin the
			// earliest credit, ri the rank of a lane's first dispatch.
			require.Len(t, rows, 1)
			require.Equal(t, int32(6), rows[0]["timeline_version"])
			require.Equal(t, true, rows[0]["has_blob"])
			tl := rows[0]["request_timeline"].(map[string]any)
			require.InDelta(t, 129.15093248, tl["durationS"], 1e-9)
			reqs := tl["requests"].([]any)
			require.Len(t, reqs, 68)
			first, last := reqs[0].(map[string]any), reqs[67].(map[string]any)
			require.Equal(t, map[string]any{"cid": "trace-0", "ti": 1.0, "ri": 0.0, "start": 0.0, "phase": "warmup"},
				map[string]any{"cid": first["cid"], "ti": first["ti"], "ri": first["ri"], "start": first["start"], "phase": first["phase"]})
			require.Equal(t, map[string]any{"cid": "trace-9", "ti": 5.0, "ri": 67.0, "start": 114077183744.0, "phase": "profiling"},
				map[string]any{"cid": last["cid"], "ti": last["ti"], "ri": last["ri"], "start": last["start"], "phase": last["phase"]})
		}},
	{read: "agentic-shared.ts: fetchAggregateStatsRows", sql: `
    select
      br.id as benchmark_result_id,
      atr.aggregate_stats as stats
    from benchmark_results br
    join agentic_trace_replay atr on atr.id = br.trace_replay_id
    where br.id = any($1::bigint[])`,
		args: func(f demoFacts) []any { return []any{[]int64{f.agentic, f.disagg}} },
		want: func(t *testing.T, f demoFacts, rows []map[string]any) {
			// The site's fast path: version 10 (STATS_VERSION of
			// agentic-shared.ts, 58192f20), every bundle with its p95, the
			// token-length sketches beside them. Sample values of the conc-4
			// point (22 profiled requests, 60 KV scrapes, no prefix-cache
			// counters in its export).
			require.Len(t, rows, 2)
			for _, r := range rows {
				st := r["stats"].(map[string]any)
				require.Equal(t, 10.0, st["version"])
				require.ElementsMatch(t, []string{"version", "isl", "osl", "kvCacheUtil", "prefixCacheHitRate", "e2elPerOsl", "sequenceLengths"},
					keysOf(st))
				isl := st["isl"].(map[string]any)
				require.ElementsMatch(t, []string{"mean", "p50", "p75", "p90", "p95", "p99", "n"}, keysOf(isl))
				sk := st["sequenceLengths"].(map[string]any)["isl"].(map[string]any)
				require.ElementsMatch(t, []string{"version", "binsPerOctave", "n", "zeroCount", "minBin", "counts"}, keysOf(sk))
				require.Equal(t, 1.0, sk["version"])
				require.Equal(t, 256.0, sk["binsPerOctave"])
				require.Equal(t, isl["n"], sk["n"], "the sketch holds the same requests as the percentiles")
				total := sk["zeroCount"].(float64)
				for _, c := range sk["counts"].([]any) {
					total += c.(float64)
				}
				require.Equal(t, sk["n"], total)
				if r["benchmark_result_id"] == f.agentic {
					require.Equal(t, 22.0, isl["n"])
					require.Equal(t, 168042.7, isl["p95"])
					require.Equal(t, 3644.0, sk["minBin"])
					require.Equal(t, 0.6174, st["kvCacheUtil"].(map[string]any)["p95"])
					require.Nil(t, st["prefixCacheHitRate"])
				}
			}
		}},
	{read: "trace-server-metrics.ts: getTraceServerMetrics", sql: `
    select
      br.trace_replay_id,
      (atr.server_metrics_json_gz is not null) as has_blob,
      atr.chart_series,
      br.id, c.hardware, c.framework, c.model, c.precision, c.spec_method,
      c.disagg, c.is_multinode,
      br.conc, br.offload_mode, br.isl, br.osl, br.benchmark_type,
      br.date::text,
      case when wr.html_url is not null then wr.html_url || '/attempts/' || wr.run_attempt else null end as run_url,
      (br.metrics ->> 'kv_cache_pool_tokens')::numeric as kv_cache_pool_tokens
    from benchmark_results br
    join configs c on c.id = br.config_id
    join workflow_runs wr on wr.id = br.workflow_run_id
    left join agentic_trace_replay atr on atr.id = br.trace_replay_id
    where br.id = any($1::bigint[])
    order by br.id`,
		args: func(f demoFacts) []any { return []any{[]int64{f.agentic, f.disagg}} },
		want: func(t *testing.T, f demoFacts, rows []map[string]any) {
			// The site's fast path: version 20 (CHART_SERIES_VERSION at
			// 08a6bf7). The disaggregated Dynamo point has its sources: its
			// export is one endpoint without Dynamo labels, so one source
			// (role unknown) holding every series; the aggregated point none.
			require.Len(t, rows, 2)
			byID := map[int64]map[string]any{}
			for _, r := range rows {
				byID[r["id"].(int64)] = r
			}
			agg, dis := byID[f.agentic]["chart_series"].(map[string]any), byID[f.disagg]["chart_series"].(map[string]any)
			require.Equal(t, 20.0, agg["version"])
			require.Equal(t, 20.0, dis["version"])
			require.Equal(t, []any{}, agg["metricSources"])
			require.Equal(t, true, byID[f.disagg]["disagg"])
			srcs := dis["metricSources"].([]any)
			require.Len(t, srcs, 1)
			src := srcs[0].(map[string]any)
			require.Equal(t, map[string]any{"id": "dynamo|unknown|http://localhost:8888/metrics", "adapter": "dynamo",
				"role": "unknown", "endpointUrl": "http://localhost:8888/metrics", "nativeRole": nil, "workerId": nil,
				"dpRank": nil, "engine": nil}, src["source"])
			// One source holding every series: its lines are the point's.
			require.Equal(t, dis["prefillTps"], src["promptTps"])
			require.Equal(t, dis["decodeTps"], src["generationTps"])
			require.Equal(t, dis["kvCacheUsage"], src["kvCacheUsage"])
			require.Equal(t, dis["queueDepth"], src["queueDepth"])
			require.NotEmpty(t, src["kvCacheUsage"])
		}},
	{read: "benchmark-siblings.ts: getBenchmarkSiblings (seed)", sql: `
    select c.hardware, c.framework, c.model, c.precision, c.spec_method, br.benchmark_type, br.workflow_run_id, br.date::text,
      wr.github_run_id, rd.dataset_slug
    from benchmark_results br
    join configs c on c.id = br.config_id
    join workflow_runs wr on wr.id = br.workflow_run_id
    left join run_datasets rd on rd.workflow_run_id = br.workflow_run_id
    where br.id = $1`,
		args: func(f demoFacts) []any { return []any{f.agentic} },
		want: func(t *testing.T, f demoFacts, rows []map[string]any) {
			require.Len(t, rows, 1)
			require.Equal(t, "cc-traces-weka-062126", rows[0]["dataset_slug"])
			require.Equal(t, f.runID, rows[0]["github_run_id"])
		}},
	{read: "datasets.ts: listDatasets", sql: `
    select id, slug, label, variant, description, hf_url, license, conversation_count, summary, ingested_at::text
    from datasets
    order by ingested_at desc, slug asc`,
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			require.Len(t, rows, 1)
			r := rows[0]
			require.Equal(t, "semianalysisai/cc-traces-weka-062126", r["id"])
			require.Equal(t, "cc-traces-weka-062126", r["slug"])
			require.Equal(t, "full", r["variant"])
			require.Equal(t, "https://huggingface.co/datasets/semianalysisai/cc-traces-weka-062126", r["hf_url"])
			require.Equal(t, "apache-2.0", r["license"])
			require.Equal(t, int32(0), r["conversation_count"], "the corpus is not loaded")
			require.Equal(t, map[string]any{}, r["summary"])
		}},
	{read: "datasets.ts: getDataset", sql: `
    select id, slug, label, variant, description, hf_url, license, conversation_count, summary, chart_data, ingested_at::text
    from datasets
    where slug = $1`,
		args: func(demoFacts) []any { return []any{"cc-traces-weka-062126"} },
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			require.Len(t, rows, 1)
			require.Equal(t, map[string]any{}, rows[0]["chart_data"])
		}},
	{read: "datasets.ts: listConversations", sql: `
    select count(*)::int as n
    from dataset_conversations
    where dataset_id = (select id from datasets where slug = $1)
      and ($2::text is null or conv_id ilike $2)`,
		args: func(demoFacts) []any { return []any{"cc-traces-weka-062126", nil} },
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			require.Equal(t, []map[string]any{{"n": int32(0)}}, rows)
		}},
	{read: "datasets.ts: getConversation", sql: `
    select dc.conv_id, dc.models, dc.num_turns, dc.num_subagent_groups, dc.total_in, dc.total_out, dc.total_cached, dc.structure
    from dataset_conversations dc
    join datasets d on d.id = dc.dataset_id
    where d.slug = $1 and dc.conv_id = $2`,
		args: func(demoFacts) []any { return []any{"cc-traces-weka-062126", "conv-1"} },
		want: func(t *testing.T, _ demoFacts, rows []map[string]any) {
			require.Empty(t, rows)
		}},
}

func (f demoFacts) serverLogPath() string { return f.serverLogFile }

// TestDashboardContracts loads the demo run, creates the dashboard's reader
// role with `ingest reader create`, and checks every contract as that
// role: the relations, the reads, and that it can change nothing.
func TestDashboardContracts(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	demo := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(demo))
	requireCode(t, cli.ExitCompletedWithFailures, run(t, vars, "load", demo))

	role := newReader(t, db, vars)
	reader := connectAs(t, db, role)

	f := demoFacts{dir: demo, runID: 28485856738}
	admin, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer admin.Close(context.WithoutCancel(t.Context()))
	require.NoError(t, admin.QueryRow(t.Context(), `SELECT er.id FROM eval_results er JOIN configs c ON c.id = er.config_id
		WHERE c.hardware = 'b200' AND er.task = 'gsm8k'`).Scan(&f.evalResult))
	var source string
	require.NoError(t, admin.QueryRow(t.Context(), `SELECT br.id, l.source_artifact FROM benchmark_results br
		JOIN configs c ON c.id = br.config_id JOIN server_logs l ON l.id = br.server_log_id
		WHERE br.benchmark_type = 'agentic_traces' AND br.conc = 4 AND c.framework = 'sglang'`).Scan(&f.agentic, &source))
	require.NoError(t, admin.QueryRow(t.Context(), `SELECT br.id FROM benchmark_results br JOIN configs c ON c.id = br.config_id
		WHERE br.benchmark_type = 'agentic_traces' AND c.framework = 'dynamo-sglang' AND c.disagg`).Scan(&f.disagg))
	f.serverLogFile = filepath.Join(demo, source, "results", "server.log")
	b, err := os.ReadFile(f.serverLogFile)
	require.NoError(t, err)
	f.serverLog = string(b)
	require.Greater(t, len(f.serverLog), 60)

	t.Run("relations", func(t *testing.T) {
		for rel, cols := range relationContracts {
			rows, err := reader.Query(t.Context(), `
				SELECT a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
				FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`, rel)
			require.NoError(t, err)
			have, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			require.NotEmpty(t, have, "%s does not resolve for the reader", rel)
			require.Subset(t, have, cols, "%s", rel)
		}
	})
	for _, rc := range readContracts {
		t.Run(rc.read, func(t *testing.T) {
			var args []any
			if rc.args != nil {
				args = rc.args(f)
			}
			rc.want(t, f, queryMaps(t, reader, rc.sql, args...))
		})
	}
	t.Run("reader changes nothing", func(t *testing.T) { readerCannotWrite(t, reader) })
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
