package store

// SQL of a corpus load (ingest datasets load). See
// migrations/000017_dashboard_reads.up.sql.

// qUpsertDataset writes the dataset's row, as the reference's loader does:
// a stored row takes the new slug, label, variant, Hugging Face URL and
// license, keeps its description unless one is given, and is dated now.
const qUpsertDataset = `
INSERT INTO datasets (id, slug, label, variant, description, hf_url, license)
VALUES ($1, $2, $3, $4, NULLIF($5, ''), $6, NULLIF($7, ''))
ON CONFLICT (id) DO UPDATE SET slug = excluded.slug, label = excluded.label, variant = excluded.variant,
	description = coalesce(excluded.description, datasets.description), hf_url = excluded.hf_url,
	license = excluded.license, ingested_at = now()`

// qClearConversations removes the dataset's conversations: a load replaces
// them all.
const qClearConversations = `DELETE FROM dataset_conversations WHERE dataset_id = $1`

var conversationColumns = []string{"dataset_id", "conv_id", "models", "num_turns", "num_subagent_groups",
	"total_in", "total_out", "total_cached", "structure"}

// qFinishDataset records the count, summary and chart data.
const qFinishDataset = `
UPDATE datasets SET conversation_count = $2, summary = $3::jsonb, chart_data = $4::jsonb, ingested_at = now()
WHERE id = $1`
