// Package eval reads the accuracy-eval artifacts of a run
// (docs/formats.md, evals): the aggregate eval_results_all/agg_eval_all.json,
// and each per-config eval_* directory (meta_env.json, lm-eval
// results_*.json including batched _conc<N> files restricted to
// completed_eval_concs, the SWE-bench variant) with its
// samples_<task>_*.jsonl, streamed line by line.
//
// It turns them into Rows: the deployment identity as a raw row (for the
// benchmark normalizer to resolve to the same configs row a benchmark of
// that deployment gets), the task, isl/osl/conc and the selected scores.
// It never touches the database.
package eval
