package store

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/schema"
)

// changelogJSON is a changelog row as qWriteChangelog reads it.
type changelogJSON struct {
	MergeRunID       int64    `json:"merge_run_id"`
	MergeRunAttempt  int      `json:"merge_run_attempt"`
	MergeRunURL      *string  `json:"merge_run_url"`
	BaseRef          string   `json:"base_ref"`
	HeadRef          string   `json:"head_ref"`
	Index            int      `json:"entry_index"`
	ConfigKeys       []string `json:"config_keys"`
	Description      string   `json:"description"`
	PRLink           *string  `json:"pr_link"`
	EvalsOnly        bool     `json:"evals_only"`
	AllEvals         bool     `json:"all_evals"`
	AppendOnly       bool     `json:"append_only"`
	EvalMinPrefillEP *int     `json:"eval_min_prefill_ep"`
	ScenarioTypes    []string `json:"scenario_types"`
	Fallback         bool     `json:"is_fallback"`
	SourceArtifact   *string  `json:"source_artifact"`
	SourceFile       *string  `json:"source_file"`
}

// WriteChangelog makes the run's changelog entries exactly rows, and marks
// the run append-only when every entry is. It returns how many entries were
// written (inserted or changed) and how many stale ones were removed.
func (t *RunTx) WriteChangelog(ctx context.Context, rows []schema.ChangelogRow) (written, removed int64, err error) {
	out := make([]changelogJSON, len(rows))
	appendOnly := len(rows) > 0
	for i, r := range rows {
		keys := make([]string, len(r.ConfigKeys))
		for j, k := range r.ConfigKeys {
			keys[j] = cleanText(k)
		}
		out[i] = changelogJSON{MergeRunID: r.MergeRunID, MergeRunAttempt: r.MergeRunAttempt, MergeRunURL: null(cleanText(r.MergeRunURL)),
			BaseRef: cleanText(r.BaseRef), HeadRef: cleanText(r.HeadRef), Index: r.Index, ConfigKeys: keys,
			Description: cleanText(r.Description), PRLink: cleanOptText(r.PRLink), EvalsOnly: r.EvalsOnly, AllEvals: r.AllEvals,
			AppendOnly: r.AppendOnly, EvalMinPrefillEP: r.EvalMinPrefillEP, ScenarioTypes: r.ScenarioTypes, Fallback: r.Fallback,
			SourceArtifact: null(cleanText(r.SourceArtifact)), SourceFile: null(cleanText(r.SourceFile))}
		appendOnly = appendOnly && r.AppendOnly
	}
	doc, err := json.Marshal(out)
	if err != nil {
		return 0, 0, t.explain("encode changelog", err)
	}
	b := &pgx.Batch{}
	b.Queue(qWriteChangelog, t.run.WorkflowRunID, string(doc), t.run.Date, t.run.IngestID)
	b.Queue(qSetAppendOnly, t.run.WorkflowRunID, appendOnly)
	res := t.tx.SendBatch(ctx, b)
	defer res.Close()
	if err := res.QueryRow().Scan(&written, &removed); err != nil {
		return 0, 0, t.explain("write changelog", err)
	}
	if _, err := res.Exec(); err != nil {
		return 0, 0, t.explain("mark append-only run", err)
	}
	if err := res.Close(); err != nil {
		return 0, 0, t.explain("write changelog", err)
	}
	return written, removed, nil
}
