package store

import (
	"slices"

	"github.com/inferencex/ingest/schema"
)

// Every SQL statement of the eval, eval sample and changelog tables lives
// in this file.

// qCreateEvalStaging creates the staging table of a run's eval rows (the
// descriptions that won their key); qCreateSampleStaging the one of the
// sample lines with the texts they bring (a text's content only the first
// time the ingest meets it).
const qCreateEvalStaging = `
CREATE TEMP TABLE stage_eval (
	eval_key bytea NOT NULL,
	hardware text NOT NULL, framework text NOT NULL, model text NOT NULL, precision text NOT NULL,
	spec_method text NOT NULL, disagg boolean NOT NULL, is_multinode boolean NOT NULL,
	prefill_tp smallint NOT NULL, prefill_ep smallint NOT NULL, prefill_dp_attention boolean NOT NULL,
	prefill_num_workers smallint NOT NULL, decode_tp smallint NOT NULL, decode_ep smallint NOT NULL,
	decode_dp_attention boolean NOT NULL, decode_num_workers smallint NOT NULL,
	num_prefill_gpu smallint NOT NULL, num_decode_gpu smallint NOT NULL,
	task text NOT NULL, isl integer, osl integer, conc integer,
	lm_eval_version text, metrics jsonb NOT NULL, content_digest bytea NOT NULL,
	source_artifact text NOT NULL, source_artifact_id bigint, source_file text NOT NULL, source_row integer NOT NULL
) ON COMMIT DROP`

// qCreateEvalIDs creates the table mapping staged eval keys to stored ids.
// Its key is unique (the stage stages one row per key): the planner, told
// so, hashes this small table to find the samples' eval rows instead of
// sorting the wide staged sample lines for a merge join.
const qCreateEvalIDs = `CREATE TEMP TABLE stage_eval_id (eval_key bytea PRIMARY KEY, id bigint NOT NULL) ON COMMIT DROP`

// qCreateSampleStaging creates the staging table of sample lines.
const qCreateSampleStaging = `
CREATE TEMP TABLE stage_eval_sample (
	seq bigint NOT NULL,
	eval_key bytea NOT NULL,
	doc_id integer NOT NULL,
	filter text NOT NULL,
	doc_digest bytea, doc_text text,
	prompt_digest bytea, prompt_text text,
	resps_digest bytea, resps_text text,
	target text, response text, passed boolean, score double precision,
	metrics jsonb, filtered_resps jsonb, data jsonb,
	source_file text NOT NULL, source_line integer NOT NULL
) ON COMMIT DROP`

// evalStagingColumns is the COPY column order of stage_eval.
var evalStagingColumns = slices.Concat([]string{"eval_key"}, schema.ConfigKeyColumns(), []string{
	"task", "isl", "osl", "conc", "lm_eval_version", "metrics", "content_digest",
	"source_artifact", "source_artifact_id", "source_file", "source_row",
})

// sampleStagingColumns is the COPY column order of stage_eval_sample.
var sampleStagingColumns = []string{
	"seq", "eval_key", "doc_id", "filter",
	"doc_digest", "doc_text", "prompt_digest", "prompt_text", "resps_digest", "resps_text",
	"target", "response", "passed", "score", "metrics", "filtered_resps", "data",
	"source_file", "source_line",
}

var evalConfigJoin = configJoin("s")

var qInsertEvalConfigs = `
INSERT INTO configs (` + configColumns + `)
SELECT DISTINCT ` + configColumns + ` FROM stage_eval
ON CONFLICT ON CONSTRAINT configs_natural_key DO NOTHING`

// qUpsertEvals writes the staged eval rows ($1 workflow run, $2 date, $3
// ingest). A row whose stored content digest is the same is a duplicate and
// is not touched; a different one is refreshed (counted as updated) and
// keeps its id and samples.
var qUpsertEvals = `
WITH src AS (
	SELECT s.*, c.id AS config_id FROM stage_eval s ` + evalConfigJoin + `
), ins AS (
	INSERT INTO eval_results AS e (workflow_run_id, config_id, task, date, isl, osl, conc, lm_eval_version,
		metrics, content_digest, source_artifact, source_artifact_id, source_file, source_row, ingest_id)
	SELECT $1, config_id, task, $2::date, isl, osl, conc, lm_eval_version,
		metrics, content_digest, source_artifact, source_artifact_id, source_file, source_row, $3
	FROM src
	ON CONFLICT ON CONSTRAINT eval_results_natural_key DO UPDATE SET
		date = EXCLUDED.date, lm_eval_version = EXCLUDED.lm_eval_version, metrics = EXCLUDED.metrics,
		content_digest = EXCLUDED.content_digest, source_artifact = EXCLUDED.source_artifact,
		source_artifact_id = EXCLUDED.source_artifact_id, source_file = EXCLUDED.source_file,
		source_row = EXCLUDED.source_row, ingest_id = EXCLUDED.ingest_id
	WHERE e.content_digest <> EXCLUDED.content_digest
	RETURNING (xmax = 0) AS inserted
)
SELECT (SELECT count(*) FROM src), (SELECT count(*) FROM ins WHERE inserted), (SELECT count(*) FROM ins WHERE NOT inserted)`

// qMatchAdoptedEvals makes each staged eval row that an eval row an adopt
// took over from the reference ingest stands for ($1 the workflow run) a
// duplicate of it: the staged row takes the adopted row's config and
// content digest, so qUpsertEvals finds it by its key and leaves it as it
// is, and its samples go to it (where qInsertSamples keeps the adopted
// documents). The reference resolved an eval's config from the eval's own
// files where we take the artifact's (a single-node SGLang eval is a 1P/1D
// disaggregated config there, with worker counts of 1), so the two are
// matched by the config without disagg, worker and GPU counts, and only
// where each side has exactly one row of that key.
const qMatchAdoptedEvals = `
WITH cand AS (
	SELECT s.eval_key, e.content_digest, c.*
	FROM stage_eval s
	JOIN eval_results e ON e.workflow_run_id = $1 AND e.source_artifact = 'adopted' AND e.task = s.task
		AND coalesce(e.isl, 0) = coalesce(s.isl, 0) AND coalesce(e.osl, 0) = coalesce(s.osl, 0)
		AND coalesce(e.conc, 0) = coalesce(s.conc, 0)
	JOIN configs c ON c.id = e.config_id
		AND (c.hardware, c.framework, c.model, c.precision, c.spec_method, c.is_multinode,
			c.prefill_tp, c.prefill_ep, c.prefill_dp_attention, c.decode_tp, c.decode_ep, c.decode_dp_attention)
		= (s.hardware, s.framework, s.model, s.precision, s.spec_method, s.is_multinode,
			s.prefill_tp, s.prefill_ep, s.prefill_dp_attention, s.decode_tp, s.decode_ep, s.decode_dp_attention)
), one AS (
	SELECT * FROM cand a
	WHERE (SELECT count(*) FROM cand b WHERE b.eval_key = a.eval_key) = 1
		AND (SELECT count(*) FROM cand b WHERE b.content_digest = a.content_digest) = 1
)
UPDATE stage_eval s SET content_digest = one.content_digest, disagg = one.disagg,
	prefill_num_workers = one.prefill_num_workers, decode_num_workers = one.decode_num_workers,
	num_prefill_gpu = one.num_prefill_gpu, num_decode_gpu = one.num_decode_gpu
FROM one WHERE one.eval_key = s.eval_key`

// qEvalIDs maps each staged eval key to the id of its stored row ($1 the
// workflow run), for the samples. isl, osl and conc are positive or NULL
// (CHECK), so coalesce(x, 0) equality is IS NOT DISTINCT FROM — and, unlike
// it, can be hashed. The config ids are resolved first (materialized), so
// the join to the run's eval rows is one hash join on the whole key, not a
// nested loop over every (eval, stored eval) pair of a task.
var qEvalIDs = `
WITH s AS MATERIALIZED (
	SELECT s.eval_key, c.id AS config_id, s.task, coalesce(s.isl, 0) AS isl, coalesce(s.osl, 0) AS osl, coalesce(s.conc, 0) AS conc
	FROM stage_eval s ` + evalConfigJoin + `
)
INSERT INTO stage_eval_id (eval_key, id)
SELECT s.eval_key, e.id
FROM s JOIN eval_results e ON e.workflow_run_id = $1 AND e.config_id = s.config_id AND e.task = s.task
	AND coalesce(e.isl, 0) = s.isl AND coalesce(e.osl, 0) = s.osl AND coalesce(e.conc, 0) = s.conc`

// qInsertSampleTexts stores each text not stored yet, once (a text staged
// twice conflicts with its first copy).
const qInsertSampleTexts = `
INSERT INTO eval_sample_texts (digest, kind, content)
SELECT digest, kind, content FROM (
	SELECT doc_digest, 'doc', doc_text FROM stage_eval_sample WHERE doc_text IS NOT NULL
	UNION ALL
	SELECT prompt_digest, 'prompt', prompt_text FROM stage_eval_sample WHERE prompt_text IS NOT NULL
	UNION ALL
	SELECT resps_digest, 'resps', resps_text FROM stage_eval_sample WHERE resps_text IS NOT NULL
) t (digest, kind, content)
ON CONFLICT (digest) DO NOTHING`

// qInsertSamples stores every (document, filter) line not stored yet ($1
// ingest). A line repeated within the run conflicts with the copy inserted
// before it (staging order: the line order of its file); no sort of the
// wide staged rows is needed.
//
// The reference kept one filter line per document: the other filter lines
// of a document whose sample ingest adopt took over are not added (they
// count as duplicates), so the samples the site shows stay the adopted
// ones (docs/operations.md, "Switching from the reference ingest").
const qInsertSamples = `
INSERT INTO eval_samples (eval_result_id, doc_id, filter, doc_digest, prompt_digest, resps_digest,
	target, response, passed, score, metrics, filtered_resps, data, source_file, source_line, ingest_id)
SELECT i.id, s.doc_id, s.filter, s.doc_digest, s.prompt_digest, s.resps_digest,
	s.target, s.response, s.passed, s.score, s.metrics, s.filtered_resps, s.data, s.source_file, s.source_line, $1
FROM stage_eval_sample s JOIN stage_eval_id i ON i.eval_key = s.eval_key
WHERE NOT EXISTS (SELECT 1 FROM eval_samples a JOIN ingests g ON g.id = a.ingest_id
	WHERE a.eval_result_id = i.id AND a.doc_id = s.doc_id AND a.filter <> s.filter AND g.target = ` + adoptedTarget + `)
ON CONFLICT ON CONSTRAINT eval_samples_natural_key DO NOTHING`

// qWriteChangelog replaces the run's changelog entries with the given ones
// ($1 workflow run, $2 entries as JSON, $3 date, $4 ingest): unchanged
// entries are left alone, changed ones updated, entries the changelog no
// longer has removed. It returns the entries written and removed.
const qWriteChangelog = `
WITH src AS (
	SELECT * FROM jsonb_to_recordset($2::jsonb) AS r(
		merge_run_id bigint, merge_run_attempt smallint, merge_run_url text, base_ref text, head_ref text,
		entry_index integer, config_keys text[], description text, pr_link text, evals_only boolean,
		all_evals boolean, append_only boolean, eval_min_prefill_ep integer, scenario_types text[],
		is_fallback boolean, source_artifact text, source_file text)
), del AS (
	DELETE FROM changelog_entries c
	WHERE c.workflow_run_id = $1 AND NOT EXISTS (
		SELECT 1 FROM src WHERE (src.base_ref, src.head_ref, src.entry_index) = (c.base_ref, c.head_ref, c.entry_index))
	RETURNING 1
), ins AS (
	INSERT INTO changelog_entries AS c (workflow_run_id, merge_run_id, merge_run_attempt, merge_run_url, date,
		base_ref, head_ref, entry_index, config_keys, description, pr_link, evals_only, all_evals, append_only,
		eval_min_prefill_ep, scenario_types, is_fallback, source_artifact, source_file, ingest_id)
	SELECT $1, merge_run_id, merge_run_attempt, merge_run_url, $3::date,
		base_ref, head_ref, entry_index, config_keys, description, pr_link, evals_only, all_evals, append_only,
		eval_min_prefill_ep, scenario_types, is_fallback, source_artifact, source_file, $4
	FROM src
	ON CONFLICT ON CONSTRAINT changelog_entries_natural_key DO UPDATE SET
		merge_run_id = EXCLUDED.merge_run_id, merge_run_attempt = EXCLUDED.merge_run_attempt,
		merge_run_url = EXCLUDED.merge_run_url, date = EXCLUDED.date, config_keys = EXCLUDED.config_keys,
		description = EXCLUDED.description, pr_link = EXCLUDED.pr_link, evals_only = EXCLUDED.evals_only,
		all_evals = EXCLUDED.all_evals, append_only = EXCLUDED.append_only,
		eval_min_prefill_ep = EXCLUDED.eval_min_prefill_ep, scenario_types = EXCLUDED.scenario_types,
		is_fallback = EXCLUDED.is_fallback, source_artifact = EXCLUDED.source_artifact,
		source_file = EXCLUDED.source_file, ingest_id = EXCLUDED.ingest_id
	WHERE (c.merge_run_id, c.merge_run_attempt, c.merge_run_url, c.date, c.config_keys, c.description, c.pr_link,
		c.evals_only, c.all_evals, c.append_only, c.eval_min_prefill_ep, c.scenario_types, c.is_fallback,
		c.source_artifact, c.source_file)
		IS DISTINCT FROM
		(EXCLUDED.merge_run_id, EXCLUDED.merge_run_attempt, EXCLUDED.merge_run_url, EXCLUDED.date, EXCLUDED.config_keys,
		EXCLUDED.description, EXCLUDED.pr_link, EXCLUDED.evals_only, EXCLUDED.all_evals, EXCLUDED.append_only,
		EXCLUDED.eval_min_prefill_ep, EXCLUDED.scenario_types, EXCLUDED.is_fallback,
		EXCLUDED.source_artifact, EXCLUDED.source_file)
	RETURNING 1
)
SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM del)`

// qSetAppendOnly marks a run whose changelog holds only append-only
// entries ($1 workflow run, $2 the flag).
const qSetAppendOnly = `UPDATE workflow_runs SET append_only = $2 WHERE id = $1 AND append_only IS DISTINCT FROM $2`

// qRecordSamplesFiles stores, per eval row, the samples file all of whose
// lines were staged ($1 eval keys, $2 file names, $3 digests, $4 lines).
const qRecordSamplesFiles = `
UPDATE eval_results e SET samples_file = d.file, samples_digest = d.digest, samples_lines = d.lines
FROM unnest($1::bytea[], $2::text[], $3::bytea[], $4::int[]) AS d(eval_key, file, digest, lines)
JOIN stage_eval_id i ON i.eval_key = d.eval_key
WHERE e.id = i.id AND (e.samples_file, e.samples_digest, e.samples_lines) IS DISTINCT FROM (d.file, d.digest, d.lines)`

// qStoredSamplesFiles lists the samples files the run's eval rows already
// hold ($1 workflow run), with the rows' natural keys.
var qStoredSamplesFiles = `
SELECT ` + configColumnsOf("c") + `,
	e.task, e.isl, e.osl, e.conc, e.samples_file, e.samples_digest, e.samples_lines
FROM eval_results e JOIN configs c ON c.id = e.config_id
WHERE e.workflow_run_id = $1 AND e.samples_digest IS NOT NULL`

// qDropReplacedSamples removes the samples of eval rows whose recorded
// samples file has been replaced by a different one ($1 eval keys, $2 the
// new files' digests), so a row's samples are always those of its latest
// complete file. Texts only they used stay (they are small next to the
// samples and may be shared).
const qDropReplacedSamples = `
DELETE FROM eval_samples s
USING unnest($1::bytea[], $2::bytea[]) AS d(eval_key, digest)
JOIN stage_eval_id i ON i.eval_key = d.eval_key
JOIN eval_results e ON e.id = i.id
WHERE s.eval_result_id = e.id AND e.samples_digest IS NOT NULL AND e.samples_digest <> d.digest`

// qPublishedEvalScores lists, per model ($1) and task ($2), the newest five
// scores other GitHub runs than $3 stored (the report's eval evidence).
const qPublishedEvalScores = `
SELECT p.model, p.task, x.github_run_id, x.date::text, x.hardware, x.framework, x.precision, x.conc, x.score
FROM unnest($1::text[], $2::text[]) AS p (model, task)
CROSS JOIN LATERAL (
	SELECT w.github_run_id, e.date, c.hardware, c.framework, c.precision, e.conc, (e.metrics ->> 'score')::float8 AS score
	FROM configs c
	JOIN eval_results e ON e.config_id = c.id
	JOIN workflow_runs w ON w.id = e.workflow_run_id
	WHERE c.model = p.model AND e.task = p.task AND w.github_run_id <> $3
		AND jsonb_typeof(e.metrics -> 'score') = 'number'
	ORDER BY e.date DESC, e.id DESC
	LIMIT 5
) x
ORDER BY p.model, p.task, x.date DESC`
