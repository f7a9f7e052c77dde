package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

func evalText(kind, content string) *schema.EvalText {
	return &schema.EvalText{Kind: kind, Digest: sha256.Sum256([]byte(kind + "\x00" + content)), Content: content}
}

// Staged sample lines land as given: NULLs, texts sent once then named by
// digest, NUL bytes dropped from text, JSON as jsonb.
func TestEvalSamplesStaged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.New(t), zaptest.NewLogger(t))
	require.NoError(t, err)
	defer st.Close()

	tx, err := st.BeginRun(ctx, start(43))
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	res := schema.EvalResult{Config: testPoint(1, 1).Config, Task: "gsm8k", Conc: intp(4),
		Metrics: map[string]any{"exact_match": 0.5}}
	key := res.KeyHash()
	require.NoError(t, tx.StageEvals(ctx, []schema.StagedEval{{Result: res, Key: key,
		Source: schema.Provenance{Artifact: "eval_x", File: "results.json"}}}))

	doc, prompt, resps := evalText("doc", "What is 2+2?\x00"), evalText("prompt", "Q: 2+2?\nA:"), evalText("resps", `[["4"]]`)
	yes, no, one, zero := true, false, 1.0, 0.0
	four := "4"
	lines := []schema.StagedEvalSample{
		{Eval: key, DocID: 0, Filter: "strict-match", Doc: doc, Prompt: prompt, Resps: resps,
			Target: &four, Response: &four, Passed: &yes, Score: &one,
			Metrics: []byte(`{"exact_match": 1}`), FilteredResps: []byte(`["4"]`), Data: []byte(`{"q": "x"}`),
			File: "samples_gsm8k.jsonl", Line: 1},
		{Eval: key, DocID: 0, Filter: "flexible-extract", Doc: doc, Prompt: prompt, Resps: resps,
			DocSent: true, PromptSent: true, RespsSent: true,
			Target: &four, Response: &four, Passed: &no, Score: &zero,
			File: "samples_gsm8k.jsonl", Line: 2},
		{Eval: key, DocID: 1, Filter: "strict\x00-match", File: "samples_gsm8k.jsonl", Line: 3},
		{Eval: key, DocID: 2, Filter: "strict-match", Doc: evalText("doc", "x"), File: "samples_gsm8k.jsonl", Line: 4},
	}
	n, err := tx.StageEvalSamples(ctx, iterate(lines))
	require.NoError(t, err)
	require.EqualValues(t, 4, n)
	applied, err := tx.ApplyEvals(ctx, []schema.EvalSamplesFile{{Eval: key, File: "samples_gsm8k.jsonl", Lines: 4}})
	require.NoError(t, err)
	require.EqualValues(t, 4, applied.SamplesNew)
	require.EqualValues(t, 4, applied.SampleTextsNew, "the doc, prompt and outputs of document 0 once, the doc of document 2")
	require.NoError(t, tx.Finish(ctx, &schema.Summary{Status: schema.StatusSucceeded, FinishedAt: time.Now()}, json.RawMessage(`[]`), false))

	type row struct {
		DocID                        int32
		Filter                       string
		Doc, Prompt, Resps           []byte
		Target, Response             *string
		Passed                       *bool
		Score                        *float64
		Metrics, FilteredResps, Data *string
		File                         string
		Line                         int32
	}
	rows, err := st.Pool().Query(ctx, `SELECT doc_id, filter, doc_digest, prompt_digest, resps_digest, target, response,
		passed, score, metrics::text, filtered_resps::text, data::text, source_file, source_line
		FROM eval_samples ORDER BY source_line`)
	require.NoError(t, err)
	var got []row
	for rows.Next() {
		var r row
		require.NoError(t, rows.Scan(&r.DocID, &r.Filter, &r.Doc, &r.Prompt, &r.Resps, &r.Target, &r.Response,
			&r.Passed, &r.Score, &r.Metrics, &r.FilteredResps, &r.Data, &r.File, &r.Line))
		got = append(got, r)
	}
	require.NoError(t, rows.Err())
	str := func(s string) *string { return &s }
	require.Equal(t, []row{
		{DocID: 0, Filter: "strict-match", Doc: doc.Digest[:], Prompt: prompt.Digest[:], Resps: resps.Digest[:],
			Target: &four, Response: &four, Passed: &yes, Score: &one,
			Metrics: str(`{"exact_match": 1}`), FilteredResps: str(`["4"]`), Data: str(`{"q": "x"}`), File: "samples_gsm8k.jsonl", Line: 1},
		{DocID: 0, Filter: "flexible-extract", Doc: doc.Digest[:], Prompt: prompt.Digest[:], Resps: resps.Digest[:],
			Target: &four, Response: &four, Passed: &no, Score: &zero, File: "samples_gsm8k.jsonl", Line: 2},
		{DocID: 1, Filter: "strict-match", File: "samples_gsm8k.jsonl", Line: 3},
		{DocID: 2, Filter: "strict-match", Doc: lines[3].Doc.Digest[:], File: "samples_gsm8k.jsonl", Line: 4},
	}, got)

	var content string
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT content FROM eval_sample_texts WHERE digest = $1`, doc.Digest[:]).Scan(&content))
	require.Equal(t, "What is 2+2?", content, "NUL bytes are dropped from text")
}
