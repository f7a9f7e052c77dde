package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// corpusSample is a small corpus in the shape of the cc-traces-weka rows:
// one conversation with a subagent group, one without.
const corpusSample = "../weka/testdata/cc-traces-weka-sample.jsonl"

// TestDatasetsLoad: `ingest datasets load` fills the tables the site's
// datasets.ts reads (run here as the reader role, with its SQL), a rerun
// replaces the conversations with the same ones, a bad file writes
// nothing, and a run replaying the dataset keeps the loaded row.
func TestDatasetsLoad(t *testing.T) {
	db := pgtest.New(t)
	vars := map[string]string{"DATABASE_URL": db}
	const id = "semianalysisai/cc-traces-weka-062126"

	requireCode(t, cli.ExitUsage, run(t, vars, "datasets", "load", corpusSample))
	requireCode(t, cli.ExitUsage, run(t, vars, "datasets", "unload", corpusSample, "--dataset", id))
	r := run(t, vars, "datasets", "load", corpusSample, "--dataset", id)
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "dataset semianalysisai/cc-traces-weka-062126 (cc-traces-weka-062126): 2 conversations loaded")

	reader := connectAs(t, db, newReader(t, db, vars))
	list := queryMaps(t, reader, `
    select id, slug, label, variant, description, hf_url, license,
           conversation_count, summary, ingested_at::text
    from datasets
    order by ingested_at desc, slug asc`)
	require.Len(t, list, 1)
	d := list[0]
	require.Equal(t, "cc-traces-weka-062126", d["slug"])
	require.Equal(t, "Claude Code traces (Weka, 2026-06-21)", d["label"], "the catalogue's label")
	require.Equal(t, "full", d["variant"])
	require.Equal(t, "https://huggingface.co/datasets/"+id, d["hf_url"])
	require.Equal(t, int32(2), d["conversation_count"])
	s := d["summary"].(map[string]any)
	// By hand (ingest/weka's tests): in 768, out 51, cached 384.
	require.Equal(t, 768.0, s["totalIn"])
	require.Equal(t, 51.0, s["totalOut"])
	require.Equal(t, 0.5, s["cachedPct"])
	require.Equal(t, 3.0, s["version"])

	detail := queryMaps(t, reader, `
    select id, slug, label, variant, description, hf_url, license,
           conversation_count, summary, chart_data, ingested_at::text
    from datasets
    where slug = $1`, "cc-traces-weka-062126")
	require.Len(t, detail, 1)
	chart := detail[0]["chart_data"].(map[string]any)
	require.Equal(t, 3.0, chart["version"])
	require.Len(t, chart["inputTokensPerTurn"].(map[string]any)["bins"], 40)

	convs := queryMaps(t, reader, `
      select conv_id, models, num_turns, num_subagent_groups, total_in, total_out, total_cached
      from dataset_conversations
      where dataset_id = $1 and ($2::text is null or conv_id ilike $2)
      order by total_in desc, conv_id asc
      limit 50 offset 0`, id, nil)
	require.Equal(t, []map[string]any{
		{"conv_id": "c4", "models": []any{"main", "sub"}, "num_turns": int32(2), "num_subagent_groups": int32(1),
			"total_in": int64(448), "total_out": int64(21), "total_cached": int64(256)},
		{"conv_id": "c1", "models": []any{"m"}, "num_turns": int32(2), "num_subagent_groups": int32(0),
			"total_in": int64(320), "total_out": int64(30), "total_cached": int64(128)},
	}, convs)
	conv := queryMaps(t, reader, `
    select dc.conv_id, dc.models, dc.num_turns, dc.num_subagent_groups,
           dc.total_in, dc.total_out, dc.total_cached, dc.structure
    from dataset_conversations dc
    join datasets d on d.id = dc.dataset_id
    where d.slug = $1 and dc.conv_id = $2`, "cc-traces-weka-062126", "c4")
	require.Len(t, conv, 1)
	st := conv[0]["structure"].(map[string]any)
	nodes := st["nodes"].([]any)
	require.Len(t, nodes, 3)
	group := nodes[1].(map[string]any)
	require.Equal(t, "subagent", group["kind"])
	require.Equal(t, "Explore", group["label"])
	require.Len(t, group["children"], 2)
	require.Equal(t, 64.0, st["blockSize"])

	before := checksum(t, db)
	r = run(t, vars, "datasets", "load", corpusSample, "--dataset", id)
	requireCode(t, cli.ExitOK, r)
	require.Contains(t, r.stdout, "2 conversations loaded")
	require.Contains(t, r.stdout, "2 replaced")
	require.Equal(t, before, checksum(t, db), "a reload stores the same conversations and summary")

	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	data, err := os.ReadFile(corpusSample)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bad, append(data, []byte("{\"id\":\"c9\",\"requests\":[{\"in\":\"many\"}]}\n")...), 0o644))
	r = run(t, vars, "datasets", "load", bad, "--dataset", id)
	requireCode(t, cli.ExitAborted, r)
	require.Contains(t, r.stderr, "bad.jsonl: line 4")
	require.Contains(t, r.stderr, "nothing was written")
	require.Equal(t, before, checksum(t, db))

	// A run replaying the dataset keeps the loaded row and its conversations.
	demo := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(demo))
	requireCode(t, cli.ExitCompletedWithFailures, run(t, vars, "load", demo))
	require.Equal(t, int64(2), count(t, db, "dataset_conversations"))
	require.Equal(t, before, checksum(t, db))
	// A rerun is answered from the ledger; after a load (a write outside an
	// ingest) the next one reads the run in full.
	r = run(t, vars, "load", demo)
	requireCode(t, cli.ExitCompletedWithFailures, r)
	require.Contains(t, r.stdout, "inputs unchanged since ingest")
	requireCode(t, cli.ExitOK, run(t, vars, "datasets", "load", corpusSample, "--dataset", id))
	r = run(t, vars, "load", demo)
	requireCode(t, cli.ExitCompletedWithFailures, r)
	require.NotContains(t, r.stdout, "inputs unchanged since ingest")
}

// checksum is the content of the dataset tables (not their dates).
func checksum(t *testing.T, db string) string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), db)
	require.NoError(t, err)
	defer conn.Close(t.Context())
	var s string
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT md5(
		(SELECT string_agg(concat_ws('|', id, slug, label, variant, description, hf_url, license, conversation_count,
			summary::text, chart_data::text), ',' ORDER BY id) FROM datasets) ||
		(SELECT string_agg(concat_ws('|', dataset_id, conv_id, models::text, num_turns, num_subagent_groups, total_in, total_out,
			total_cached, structure::text), ',' ORDER BY conv_id) FROM dataset_conversations))`).Scan(&s))
	return s
}
