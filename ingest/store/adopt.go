package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/klauspost/compress/gzip"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/trace"
	"github.com/inferencex/ingest/migrations"
	"github.com/inferencex/ingest/schema"
)

// ErrAdoptRefused marks a database adopt does not take over: not the
// reference ingest's schema, a level it does not know, or rows our checks
// refuse. Nothing was written.
var ErrAdoptRefused = errors.New("adopt refused, nothing was changed")

// referenceFiles are the reference ingest's migration files adopt knows
// (docs/reference-schema.md, "Levels"): the fork's 001–010, the newer
// ones of the reference, and the branch files seen beside them (002 and
// 008 under other names, 016's receipt table).
var referenceFiles = []string{
	"001_initial_schema.sql", "002_eval_samples.sql", "002_eval_unique_conc.sql",
	"003_latest_benchmarks_run_started_tiebreaker.sql", "004_relax_decode_zero_constraints.sql",
	"005_user_feedback.sql", "006_benchmark_results_workers.sql", "007_latest_benchmarks_single_run_per_line.sql",
	"008_agentic.sql", "008_benchmark_results_kv_transfer_lib.sql", "009_latest_benchmarks_single_run_per_line.sql",
	"010_dataset_request_stats.sql", "011_append_only_curves.sql", "012_benchmark_recipe_fingerprint.sql",
	"013_server_log_files.sql", "014_agentic_curve_snapshots.sql", "015_power_provenance.sql", "016_gpu_metrics.sql",
	"016_measurement_snapshots.sql", "017_gpu_metric_stats_version.sql",
}

// referenceColumns are the columns of the reference's tables adopt
// converts, at its newest known level; a table or column outside them is
// something adopt would lose, and it refuses. A nil list is a table adopt
// moves to reference_archive as it is, converting nothing.
var referenceColumns = map[string][]string{
	"configs": {"id", "hardware", "framework", "model", "precision", "spec_method", "disagg", "is_multinode",
		"prefill_tp", "prefill_ep", "prefill_dp_attention", "prefill_num_workers", "decode_tp", "decode_ep",
		"decode_dp_attention", "decode_num_workers", "num_prefill_gpu", "num_decode_gpu"},
	"workflow_runs": {"id", "github_run_id", "run_attempt", "name", "status", "conclusion", "head_sha", "head_branch",
		"html_url", "created_at", "run_started_at", "date", "append_only"},
	"server_logs":      {"id", "server_log", "file_name", "files_complete"},
	"server_log_files": {"server_log_id", "file_name", "log_text"},
	"benchmark_results": {"id", "workflow_run_id", "config_id", "benchmark_type", "date", "isl", "osl", "conc", "image",
		"metrics", "error", "server_log_id", "workers", "offload_mode", "trace_replay_id", "recipe_fingerprint",
		"power_invalid_reasons", "power_audit", "kv_transfer_lib"},
	"run_stats":    {"id", "workflow_run_id", "date", "hardware", "n_success", "total"},
	"eval_results": {"id", "workflow_run_id", "config_id", "task", "date", "isl", "osl", "conc", "lm_eval_version", "metrics"},
	"availability": {"model", "isl", "osl", "precision", "hardware", "framework", "spec_method", "disagg", "date", "benchmark_type"},
	"changelog_entries": {"id", "workflow_run_id", "date", "base_ref", "head_ref", "config_keys", "description", "pr_link",
		"append_only"},
	"eval_samples": {"id", "eval_result_id", "doc_id", "prompt", "target", "response", "passed", "score", "metrics", "data"},
	"agentic_trace_replay": {"id", "profile_export_jsonl_gz", "profile_export_uncompressed_size", "server_metrics_csv",
		"server_metrics_csv_size", "created_at", "server_metrics_json_gz", "server_metrics_json_uncompressed_size",
		"aggregate_stats", "chart_series", "request_timeline"},
	"datasets": {"id", "slug", "label", "variant", "description", "hf_url", "license", "conversation_count", "summary",
		"chart_data", "dataset_version", "ingested_at"},
	"dataset_conversations": {"id", "dataset_id", "conv_id", "models", "num_turns", "num_subagent_groups", "total_in",
		"total_out", "total_cached", "structure"},
	"run_datasets": {"workflow_run_id", "dataset_slug", "created_at"},
	"gpu_metric_series": {"id", "workflow_run_id", "artifact_name", "config_key", "file_name", "vendor", "csv_sha256",
		"sample_interval_s", "sample_count", "gpu_count", "started_at", "ended_at", "sidecars", "ingested_at", "stats_version"},
	"gpu_metric_samples": {"series_id", "gpu_index", "sampled_at", "power_w", "temperature_c", "sm_clock_mhz", "mem_clock_mhz",
		"gpu_util_pct", "mem_util_pct", "edge_temp_c", "mem_temp_c", "gfx_voltage_mv", "soc_voltage_mv", "mem_voltage_mv",
		"fclk_mhz", "socclk_mhz", "mm_activity_pct"},
	"gpu_metric_gpu_stats": {"series_id", "gpu_index", "metric", "sample_count", "min_value", "max_value", "mean_value",
		"median_value", "p95_value", "p99_value", "stddev_value"},
	"benchmark_result_gpu_metrics": {"benchmark_result_id", "series_id"},
	// The receipt import's table (016_measurement_snapshots.sql), reverted
	// and left unused: nothing of ours or the site's reads it, so it moves
	// to reference_archive with its rows, unconverted.
	"measurement_snapshots": nil,
}

// siteTables are the tables adopt leaves in public as they are: the
// site's own and the reference's bookkeeping (the record of what was
// adopted).
var siteTables = []string{"user_feedback", "schema_migrations"}

// AdoptTable is one reference table: its rows and bytes (with TOAST and
// indexes).
type AdoptTable struct {
	Name  string
	Rows  int64
	Bytes int64
}

// AdoptPlan is what adopt found and what it would do.
type AdoptPlan struct {
	// Files are the reference's applied migration files; Newest the last.
	Files  []string
	Newest string
	// Features present by column: 011 append_only, 012 recipe_fingerprint,
	// 013 server_log_files, 015 power columns, 016 the GPU metric tables
	// (017 their stats_version); the branch files' 008 kv_transfer_lib and
	// 016 measurement_snapshots.
	AppendOnly, Fingerprint, LogFiles, Power, GPU, GPUStatsVersion bool
	KVTransferLib, Snapshots                                       bool
	// KVTransferLibValues counts the rows with a kv_transfer_lib (copied).
	KVTransferLibValues int64
	// Tables are the reference's tables converted and moved to
	// reference_archive; Kept the site's, left in public.
	Tables []AdoptTable
	Kept   []AdoptTable
	// EvalMerges are the eval rows that share a key (isl, osl or conc
	// NULL) with a newer one, merged into it; TracesWithoutProfile the
	// trace rows without a profile export, kept with the reference's
	// payloads.
	EvalMerges, TracesWithoutProfile int64
	// Refusals say why adopt will not run; empty: it will.
	Refusals []string
	// Estimate is a rough duration on a 2-core host.
	Estimate time.Duration
	moved    []string
}

// TotalBytes sums the converted tables' bytes.
func (p AdoptPlan) TotalBytes() int64 {
	var n int64
	for _, t := range p.Tables {
		n += t.Bytes
	}
	return n
}

// PlanAdopt reads the reference's schema and what adopt would convert,
// writing nothing. A database that is not the reference ingest's, or at a
// level adopt does not know (a migration file it does not know: the
// newest found is named), is ErrAdoptRefused; rows our checks refuse are
// listed in Refusals.
func (s *Store) PlanAdopt(ctx context.Context) (AdoptPlan, error) {
	var p AdoptPlan
	inv, err := s.inventory(ctx, nil)
	if err != nil {
		return p, err
	}
	if inv.schema != "public" {
		return p, fmt.Errorf("adopt converts the public schema; the connection's schema is %s: %w", inv.schema, ErrAdoptRefused)
	}
	if !inv.isReference() {
		switch inv.layout() {
		case layoutOurs, layoutLegacy:
			return p, fmt.Errorf("the database is already this program's: %w", ErrAdoptRefused)
		case layoutEmpty:
			return p, fmt.Errorf("the database is empty (\"ingest migrate up\" creates our schema): %w", ErrAdoptRefused)
		}
		return p, fmt.Errorf("the database holds no reference ingest schema (no schema_migrations(filename, applied_at)): %w", ErrAdoptRefused)
	}
	rows, _ := s.pool.Query(ctx, qAdoptFiles)
	p.Files, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return p, fmt.Errorf("read the reference's schema_migrations: %w", err)
	}
	if len(p.Files) > 0 {
		p.Newest = p.Files[len(p.Files)-1]
	}
	var unknown []string
	for _, f := range p.Files {
		if !slices.Contains(referenceFiles, f) {
			unknown = append(unknown, f)
		}
	}
	if len(unknown) > 0 || len(p.Files) == 0 {
		return p, fmt.Errorf("the reference's schema is at a level adopt does not know: newest migration file %q, unknown %s "+
			"(known: 001_initial_schema.sql to 017_gpu_metric_stats_version.sql and the branch files 002_eval_unique_conc.sql, "+
			"008_benchmark_results_kv_transfer_lib.sql, 016_measurement_snapshots.sql): %w", p.Newest, strings.Join(unknown, ", "), ErrAdoptRefused)
	}
	cols := map[string][]string{}
	rows, _ = s.pool.Query(ctx, qAdoptColumns)
	var table, col string
	if _, err := pgx.ForEachRow(rows, []any{&table, &col}, func() error {
		cols[table] = append(cols[table], col)
		return nil
	}); err != nil {
		return p, fmt.Errorf("read the reference's columns: %w", err)
	}
	has := func(t, c string) bool { return slices.Contains(cols[t], c) }
	p.AppendOnly, p.Fingerprint = has("workflow_runs", "append_only"), has("benchmark_results", "recipe_fingerprint")
	p.LogFiles, p.Power = len(cols["server_log_files"]) > 0, has("benchmark_results", "power_invalid_reasons")
	p.GPU, p.GPUStatsVersion = len(cols["gpu_metric_series"]) > 0, has("gpu_metric_series", "stats_version")
	p.KVTransferLib, p.Snapshots = has("benchmark_results", "kv_transfer_lib"), len(cols["measurement_snapshots"]) > 0
	if p.LogFiles != has("server_logs", "file_name") {
		p.Refusals = append(p.Refusals, "server_logs.file_name and table server_log_files are not both present")
	}
	for _, t := range slices.Sorted(mapKeys(cols)) {
		if slices.Contains(siteTables, t) {
			continue
		}
		known, ok := referenceColumns[t]
		if !ok {
			p.Refusals = append(p.Refusals, fmt.Sprintf("table %s is not the reference's (adopt would move it aside)", t))
			continue
		}
		for _, c := range cols[t] {
			if known != nil && !slices.Contains(known, c) {
				p.Refusals = append(p.Refusals, fmt.Sprintf("column %s.%s is not one adopt converts", t, c))
			}
		}
	}
	if err := s.adoptSizes(ctx, &p, cols); err != nil {
		return p, err
	}
	if err := s.adoptChecks(ctx, &p); err != nil {
		return p, err
	}
	p.Estimate = adoptEstimate(p)
	return p, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// adoptSizes counts each table's rows and bytes.
func (s *Store) adoptSizes(ctx context.Context, p *AdoptPlan, cols map[string][]string) error {
	bytes := map[string]int64{}
	rows, _ := s.pool.Query(ctx, qAdoptTableSizes)
	var name string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&name, &n}, func() error { bytes[name] = n; return nil }); err != nil {
		return fmt.Errorf("read the reference's table sizes: %w", err)
	}
	for _, t := range slices.Sorted(mapKeys(cols)) {
		var count int64
		if err := s.pool.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM public.%s", pgx.Identifier{t}.Sanitize())).Scan(&count); err != nil {
			return fmt.Errorf("count the rows of %s: %w", t, err)
		}
		at := AdoptTable{Name: t, Rows: count, Bytes: bytes[t]}
		if slices.Contains(siteTables, t) {
			p.Kept = append(p.Kept, at)
		} else {
			p.Tables = append(p.Tables, at)
			p.moved = append(p.moved, t)
		}
	}
	return nil
}

// adoptChecks lists what refuses the adopt: rows our checks refuse,
// schemas adopt creates already there, keys from the site's tables into
// those moved aside.
func (s *Store) adoptChecks(ctx context.Context, p *AdoptPlan) error {
	rows, _ := s.pool.Query(ctx, qAdoptRefusals)
	var what string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&what, &n}, func() error {
		if n > 0 {
			p.Refusals = append(p.Refusals, fmt.Sprintf("%d %s", n, what))
		}
		return nil
	}); err != nil {
		return fmt.Errorf("check the reference's rows against our constraints: %w", err)
	}
	if err := s.pool.QueryRow(ctx, qAdoptTracesWithoutProfile).Scan(&p.TracesWithoutProfile); err != nil {
		return fmt.Errorf("count the reference's traces without a profile: %w", err)
	}
	if err := s.pool.QueryRow(ctx, qAdoptEvalMerges).Scan(&p.EvalMerges); err != nil {
		return fmt.Errorf("count the reference's eval rows sharing a key: %w", err)
	}
	if p.KVTransferLib {
		if err := s.pool.QueryRow(ctx, qAdoptKVTransferLib).Scan(&p.KVTransferLibValues); err != nil {
			return fmt.Errorf("count the reference's kv_transfer_lib values: %w", err)
		}
	}
	var present []string
	if err := s.pool.QueryRow(ctx, qAdoptSchemasPresent).Scan(&present); err != nil {
		return fmt.Errorf("look up schemas: %w", err)
	}
	for _, sc := range present {
		p.Refusals = append(p.Refusals, fmt.Sprintf("schema %s already exists (adopt creates it)", sc))
	}
	rows, _ = s.pool.Query(ctx, qAdoptForeignKeysIn, siteTables)
	fks, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("look up foreign keys into the reference's tables: %w", err)
	}
	for _, fk := range fks {
		p.Refusals = append(p.Refusals, "foreign key "+fk+" from a table adopt leaves into one it moves aside")
	}
	return nil
}

// adoptEstimate: the trace table's stored bytes at 8 MB/s (each blob read
// once, hashed, copied, and its profile and server metrics parsed for the
// payloads), GPU samples at 100,000 a second (packed into chunks in one
// sorted pass), the other rows at 8,000 a second: the rates of the 2-core
// development host (docs/performance.md, "Current figures"), a rough
// guide, not a bound.
func adoptEstimate(p AdoptPlan) time.Duration {
	var rows, samples, blobs int64
	for _, t := range p.Tables {
		switch t.Name {
		case "agentic_trace_replay":
			blobs += t.Bytes
		case "gpu_metric_samples":
			samples += t.Rows
		default:
			rows += t.Rows
		}
	}
	secs := float64(blobs)/8e6 + float64(samples)/100_000 + float64(rows)/8000
	return time.Duration(secs*float64(time.Second)).Round(time.Second) + 5*time.Second
}

// AdoptOptions are the adopt's inputs.
type AdoptOptions struct {
	// Repo is the repository the reference ingested (workflow_runs.repo).
	Repo string
	// ToolVersion is recorded in the ledger rows adopt writes.
	ToolVersion string
	// Step, when set, is called before each step with its name; an error
	// stops the adopt there (the transaction rolls back). Tests use it.
	Step func(name string) error
	// EvalBatchSamples is about how many reference samples one batch of
	// the eval sample copy takes; 0 is evalSamplesPerBatch.
	EvalBatchSamples int64
}

// AdoptResult is what adopt did.
type AdoptResult struct {
	// Rows inserted into our tables, by table.
	Rows      map[string]int64
	Blobs     int64 // trace blobs stored
	BlobBytes int64 // their stored bytes
	// BlobBytesRead counts the reference's blob bytes read through the
	// client: each blob once.
	BlobBytesRead int64
	// PayloadsKept counts traces without a profile export or with one
	// our trace code cannot read: they keep the reference's payloads (a
	// NULL aggregate_stats as {}); the others hold ours, computed from
	// their blobs.
	PayloadsKept int64
	Moved        []string
	Duration     time.Duration
}

// Adopt converts the reference's database in place, in one transaction:
// our schema is built in a scratch schema, the reference's rows copied
// into it with their ids and converted, the curves computed by our rules;
// then the reference's tables move to reference_archive and ours to
// public. The reference's tables are locked against writes throughout
// (the site reads on) and swapped in a moment at the end; a failure or a
// kill at any point leaves the database as it was.
func (s *Store) Adopt(ctx context.Context, p AdoptPlan, o AdoptOptions) (AdoptResult, error) {
	res := AdoptResult{Rows: map[string]int64{}}
	if len(p.Refusals) > 0 {
		return res, fmt.Errorf("%s: %w", strings.Join(p.Refusals, "; "), ErrAdoptRefused)
	}
	latest, err := LatestMigration()
	if err != nil {
		return res, err
	}
	start := time.Now()
	a := &adoption{s: s, p: p, o: o, res: &res}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		a.tx = tx
		return a.run(ctx, latest)
	})
	if err != nil {
		return res, fmt.Errorf("adopt (rolled back, nothing changed): %w", err)
	}
	res.Duration = time.Since(start)
	s.log.Info("adopted the reference database", zap.Duration("took", res.Duration), zap.Int64("blob_bytes", res.BlobBytes), zap.Int64("blob_bytes_read", res.BlobBytesRead))
	return res, nil
}

type adoption struct {
	s   *Store
	p   AdoptPlan
	o   AdoptOptions
	tx  pgx.Tx
	res *AdoptResult
	// evalBounds are the first reference eval ids of the sample batches
	// not copied yet, each batch up to the next bound (the last: on).
	evalBounds []int64
}

func (a *adoption) step(name string) error {
	a.s.log.Debug("adopt step", zap.String("step", name))
	if a.o.Step != nil {
		return a.o.Step(name)
	}
	return nil
}

// exec runs one step's statement, counting its rows under table.
func (a *adoption) exec(ctx context.Context, table, sql string, args ...any) error {
	if err := a.step(table); err != nil {
		return err
	}
	tag, err := a.tx.Exec(ctx, a.level(sql), args...)
	if err != nil {
		return fmt.Errorf("adopt %s: %w", table, err)
	}
	if table != "" {
		a.res.Rows[table] += tag.RowsAffected()
	}
	return nil
}

// level puts the level's column expressions into a copy statement.
func (a *adoption) level(sql string) string {
	pick := func(present bool, expr, absent string) string {
		if present {
			return expr
		}
		return absent
	}
	logFiles := ""
	logTexts := ""
	if a.p.LogFiles {
		logFiles = `UNION ALL SELECT server_log_id, file_name, sha256(convert_to(log_text, 'UTF8')), octet_length(log_text)::bigint, false
FROM public.server_log_files`
		logTexts = `UNION ALL SELECT sha256(convert_to(log_text, 'UTF8')), octet_length(log_text)::bigint, log_text FROM public.server_log_files`
	}
	return strings.NewReplacer(
		"{wr_append_only}", pick(a.p.AppendOnly, "append_only", "false"),
		"{cl_append_only}", pick(a.p.AppendOnly, "c.append_only", "false"),
		"{br_fingerprint}", pick(a.p.Fingerprint, "r.recipe_fingerprint", "NULL::text"),
		"{br_reasons}", pick(a.p.Power, "r.power_invalid_reasons", "NULL::jsonb"),
		"{br_audit}", pick(a.p.Power, "r.power_audit", "NULL::jsonb"),
		"{br_kv_transfer_lib}", pick(a.p.KVTransferLib, "r.kv_transfer_lib", "NULL::text"),
		"{log_primary}", pick(a.p.LogFiles, "file_name", "'server.log'::text"),
		"{gs_stats_version}", pick(a.p.GPUStatsVersion, "s.stats_version", "0"),
		"{log_files_of}", pick(a.p.LogFiles, "UNION ALL SELECT file_name, log_text FROM public.server_log_files WHERE server_log_id = $1", ""),
		"{log_files}", logFiles,
		"{log_texts}", logTexts,
	).Replace(sql)
}

func (a *adoption) run(ctx context.Context, latest uint) error {
	if err := a.step("lock"); err != nil {
		return err
	}
	if _, err := a.tx.Exec(ctx, qAdoptLockAdvisory); err != nil {
		return fmt.Errorf("adopt lock: %w", err)
	}
	if err := a.lock(ctx, "SHARE"); err != nil {
		return err
	}
	if err := a.exec(ctx, "", qAdoptCreateSchema); err != nil {
		return err
	}
	if err := a.exec(ctx, "", qAdoptSearchPath); err != nil {
		return err
	}
	if err := a.migrate(ctx); err != nil {
		return err
	}
	if err := a.exec(ctx, "", qCreateVersionTable); err != nil {
		return err
	}
	if err := a.exec(ctx, "", qAdoptVersion, int64(latest)); err != nil {
		return err
	}
	fks, err := a.dropBulkForeignKeys(ctx)
	if err != nil {
		return err
	}
	copies := []struct {
		table, sql string
		args       []any
	}{
		{"configs", qAdoptConfigs, nil},
		{"workflow_runs", qAdoptWorkflowRuns, []any{a.o.Repo}},
		{"ingests", qAdoptIngests, []any{a.o.ToolVersion}},
		{"server_log_texts", qAdoptServerLogTexts, nil},
		{"", qAdoptLogFiles, nil},
		{"", qAdoptLogBundles, nil},
		{"server_logs", qAdoptServerLogs, nil},
		{"server_log_files", qAdoptServerLogFiles, nil},
	}
	for _, c := range copies {
		if err := a.exec(ctx, c.table, c.sql, c.args...); err != nil {
			return err
		}
	}
	if err := a.evalRows(ctx); err != nil {
		return err
	}
	// The eval samples need nothing the trace step writes: their batches
	// run while the trace readers have no trace ready, the rest after.
	if err := a.traces(ctx); err != nil {
		return err
	}
	for {
		more, err := a.evalBatch(ctx)
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	copies = []struct {
		table, sql string
		args       []any
	}{
		{"benchmark_results", qAdoptBenchmarkResults, []any{trace.ServerMetricsReplaced()}},
		{"run_stats", qAdoptRunStats, nil},
		{"changelog_entries", qAdoptChangelog, nil},
		{"availability", qAdoptAvailability, nil},
		{"datasets", qAdoptDatasets, nil},
		{"dataset_conversations", qAdoptDatasetConversations, nil},
		{"run_datasets", qAdoptRunDatasets, nil},
	}
	if a.p.GPU {
		copies = append(copies, []struct {
			table, sql string
			args       []any
		}{
			{"gpu_metric_series", qAdoptGPUSeries, nil},
			{"gpu_metric_sample_chunks", qAdoptGPUSamples, nil},
			{"gpu_metric_gpu_stats", qAdoptGPUStats, nil},
			{"benchmark_result_gpu_metrics", qAdoptGPULinks, nil},
		}...)
	}
	for _, c := range copies {
		if err := a.exec(ctx, c.table, c.sql, c.args...); err != nil {
			return err
		}
	}
	if err := a.step("foreign keys"); err != nil {
		return err
	}
	for _, fk := range fks {
		if _, err := a.tx.Exec(ctx, fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s %s", fk.table,
			pgx.Identifier{fk.name}.Sanitize(), fk.def)); err != nil {
			return fmt.Errorf("adopt: check %s: %w", fk.name, err)
		}
	}
	if err := a.step("curves"); err != nil {
		return err
	}
	explain := func(what string, err error) error { return fmt.Errorf("adopt %s: %w", what, err) }
	out, err := updateCurves(ctx, a.tx, false, true, explain)
	if err != nil {
		return err
	}
	a.res.Rows["benchmark_curves"] = out.curves
	if err := a.sequences(ctx); err != nil {
		return err
	}
	return a.swap(ctx)
}

// foreignKey is one constraint dropped for the copy.
type foreignKey struct{ table, name, def string }

// dropBulkForeignKeys drops the foreign keys of the largest tables, to be
// added back (and so checked) once they are filled.
func (a *adoption) dropBulkForeignKeys(ctx context.Context) ([]foreignKey, error) {
	rows, _ := a.tx.Query(ctx, qAdoptBulkForeignKeys)
	fks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (foreignKey, error) {
		var fk foreignKey
		err := r.Scan(&fk.table, &fk.name, &fk.def)
		return fk, err
	})
	if err != nil {
		return nil, fmt.Errorf("adopt: list the foreign keys: %w", err)
	}
	for _, fk := range fks {
		if _, err := a.tx.Exec(ctx, fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s", fk.table, pgx.Identifier{fk.name}.Sanitize())); err != nil {
			return nil, fmt.Errorf("adopt: drop %s for the copy: %w", fk.name, err)
		}
	}
	return fks, nil
}

// lock takes the reference's tables in mode.
func (a *adoption) lock(ctx context.Context, mode string) error {
	names := make([]string, len(a.p.moved))
	for i, t := range a.p.moved {
		names[i] = "public." + pgx.Identifier{t}.Sanitize()
	}
	if len(names) == 0 {
		return nil
	}
	if _, err := a.tx.Exec(ctx, fmt.Sprintf("LOCK TABLE %s IN %s MODE", strings.Join(names, ", "), mode)); err != nil {
		return fmt.Errorf("adopt: lock the reference's tables (%s): %w", mode, err)
	}
	return nil
}

// migrate runs our up migrations, oldest first, into the scratch schema:
// names our migrations qualify with public. are the scratch schema's.
func (a *adoption) migrate(ctx context.Context) error {
	if err := a.step("migrations"); err != nil {
		return err
	}
	ups, err := fs.Glob(migrations.FS, "*.up.sql")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	sort.Strings(ups) // zero-padded versions: name order is version order
	for _, f := range ups {
		b, err := fs.ReadFile(migrations.FS, f)
		if err != nil {
			return fmt.Errorf("migrations: %w", err)
		}
		sql := strings.ReplaceAll(string(b), "public.", adoptSchema+".")
		if _, err := a.tx.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
			return fmt.Errorf("adopt: migration %s: %w", f, err)
		}
	}
	return nil
}

// sequences sets each of our id sequences past the adopted ids and the
// reference's own last value.
func (a *adoption) sequences(ctx context.Context) error {
	if err := a.step("sequences"); err != nil {
		return err
	}
	type seq struct{ ours, theirs, table string }
	rows, _ := a.tx.Query(ctx, qAdoptSequences)
	seqs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (seq, error) {
		var s seq
		err := r.Scan(&s.ours, &s.theirs, &s.table)
		return s, err
	})
	if err != nil {
		return fmt.Errorf("adopt: list the sequences: %w", err)
	}
	for _, sq := range seqs {
		q := fmt.Sprintf(`SELECT setval('%s', greatest((SELECT max(id) FROM %s), (SELECT last_value FROM %s), 1))`,
			sq.ours, sq.table, sq.theirs)
		if _, err := a.tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("adopt: set %s: %w", sq.ours, err)
		}
	}
	return nil
}

// swap moves the reference's objects to reference_archive and ours to
// public, then drops the scratch schema: metadata only, under an exclusive
// lock held a moment before the commit.
func (a *adoption) swap(ctx context.Context) error {
	if err := a.step("swap"); err != nil {
		return err
	}
	if err := a.lock(ctx, "ACCESS EXCLUSIVE"); err != nil {
		return err
	}
	if _, err := a.tx.Exec(ctx, "CREATE SCHEMA "+archiveSchema); err != nil {
		return fmt.Errorf("adopt: create %s: %w", archiveSchema, err)
	}
	moves := []struct{ from, to string }{{"public", archiveSchema}, {adoptSchema, "public"}}
	for _, m := range moves {
		rows, _ := a.tx.Query(ctx, qAdoptMovable, m.from, siteTables)
		type obj struct{ kind, name string }
		objs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (obj, error) {
			var o obj
			err := r.Scan(&o.kind, &o.name)
			return o, err
		})
		if err != nil {
			return fmt.Errorf("adopt: list %s: %w", m.from, err)
		}
		for _, o := range objs {
			if _, err := a.tx.Exec(ctx, fmt.Sprintf("ALTER %s %s SET SCHEMA %s", o.kind, o.name, m.to)); err != nil {
				return fmt.Errorf("adopt: move %s to %s: %w", o.name, m.to, err)
			}
			if m.from == "public" {
				a.res.Moved = append(a.res.Moved, o.name)
			}
		}
	}
	if _, err := a.tx.Exec(ctx, "DROP SCHEMA "+adoptSchema); err != nil {
		return fmt.Errorf("adopt: drop the scratch schema: %w", err)
	}
	return a.step("commit")
}

// blobColumns are the reference's blob columns, each with its length in
// the trace row query.
const (
	colProfile = "profile_export_jsonl_gz"
	colJSON    = "server_metrics_json_gz"
	colCSV     = "server_metrics_csv"
	blobChunk  = 1 << 20
)

// traces moves each reference trace row: its gzip blobs into our chunked
// blob store (the bytes as stored, hashed uncompressed as ours are), the
// raw CSV gzipped, the row keyed by our bundle digest. Memory holds one
// chunk at a time.
func (a *adoption) traces(ctx context.Context) error {
	if err := a.exec(ctx, "", qAdoptTraceMap); err != nil {
		return err
	}
	if err := a.exec(ctx, "", qAdoptTimelineTable); err != nil {
		return err
	}
	if err := a.exec(ctx, "", qAdoptServerMetricsTable); err != nil {
		return err
	}
	rows, _ := a.tx.Query(ctx, qAdoptTraceRows)
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (traceRow, error) {
		var t traceRow
		err := r.Scan(&t.id, &t.profile, &t.json, &t.csv, &t.profN, &t.jsonN, &t.csvN, &t.jsonSize)
		return t, err
	})
	if err != nil {
		return fmt.Errorf("adopt agentic_trace_replay: %w", err)
	}
	if err := a.readTraces(ctx, all, func(r traceRead) error { return a.trace(ctx, r) }, a.evalBatch); err != nil {
		return err
	}
	if err := a.serverMetrics(ctx, "r.trace_replay_id IS NULL", nil); err != nil {
		return fmt.Errorf("adopt AgentX rows without a trace: %w", err)
	}
	return nil
}

// trace writes one reference trace row a reader read: its gzip blobs
// (copied in the database), its raw CSV (gzipped here), the row keyed by
// our bundle digest, its payloads when the trace is new, and the owned
// server-metric keys of the rows it serves.
func (a *adoption) trace(ctx context.Context, r traceRead) error {
	if err := a.step("agentic_trace_replay"); err != nil {
		return err
	}
	t := r.row
	a.res.BlobBytesRead += r.read
	in := r.in
	var scrape trace.Scrape
	var tags []string
	var sums [][]byte
	digests := [3][]byte{r.digests[0], r.digests[1]}
	sizes := [3]int64{r.sizes[0], r.sizes[1]}
	for i, c := range []struct {
		col, tag string
		present  bool
		n        int64
	}{{colProfile, "profile_export.jsonl", t.profile, t.profN}, {colJSON, "server_metrics_export.json", t.json, t.jsonN},
		{colCSV, "server_metrics_export.csv", t.csv, t.csvN}} {
		if !c.present {
			continue
		}
		var err error
		if c.col == colCSV {
			// The scrape is what the owned server-metric keys of the
			// rows derive from; unreadable, they derive without it.
			var perr error
			digests[i], sizes[i], perr, err = a.rawBlob(ctx, t.id, c.col, c.n, func(r io.Reader) (err error) {
				scrape, err = trace.ReadScrape(r)
				return err
			})
			if perr != nil {
				a.s.log.Warn("adopted trace's server metrics CSV unreadable", zap.Int64("trace", t.id), zap.Error(perr))
				scrape = nil
			}
		} else {
			err = a.storeGzipBlob(ctx, t.id, c.col, c.n, digests[i], sizes[i])
		}
		if err != nil {
			return fmt.Errorf("adopt agentic_trace_replay %d %s: %w", t.id, c.col, err)
		}
		tags, sums = append(tags, c.tag), append(sums, digests[i])
	}
	if !t.profile {
		in.profileErr = errors.New("no profile export")
	}
	bundle := sha256.New()
	for i, tag := range tags {
		fmt.Fprintf(bundle, "%s\x00%s\n", tag, hex.EncodeToString(sums[i]))
	}
	digest := bundle.Sum(nil)
	newID := t.id
	err := a.tx.QueryRow(ctx, qAdoptTraceFind, digest).Scan(&newID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		newID = t.id
		if _, err := a.tx.Exec(ctx, qAdoptTraceInsert, t.id, digest, digests[0], sizes[0], digests[1], sizes[1],
			digests[2], sizes[2]); err != nil {
			return fmt.Errorf("adopt agentic_trace_replay %d: %w", t.id, err)
		}
		if err := a.payloads(ctx, t.id, digest, in); err != nil {
			return fmt.Errorf("adopt agentic_trace_replay %d: %w", t.id, err)
		}
		a.res.Rows["agentic_trace_replay"]++
	case err != nil:
		return fmt.Errorf("adopt agentic_trace_replay %d: %w", t.id, err)
	}
	if _, err := a.tx.Exec(ctx, qAdoptTraceMapRow, t.id, newID); err != nil {
		return fmt.Errorf("adopt agentic_trace_replay %d: %w", t.id, err)
	}
	if !t.profile {
		// An ingest finds no trace for a point without a profile
		// export: its rows' server metrics derive without the scrape.
		scrape = nil
	}
	if err := a.serverMetrics(ctx, "r.trace_replay_id = $2", scrape, t.id); err != nil {
		return fmt.Errorf("adopt agentic_trace_replay %d: %w", t.id, err)
	}
	return nil
}

// serverMetrics computes the owned server-metric keys of the reference's
// AgentX rows where (a trace's rows, or those without one) with the traces
// stage's code, as an ingest of the run derives them: from the row's
// config and published metrics, its trace's scrape (nil without one) and
// the startup lines of its server log's worker files. They wait in
// adopt_server_metrics for the rows' copy.
func (a *adoption) serverMetrics(ctx context.Context, where string, scrape trace.Scrape, args ...any) error {
	type agentxRow struct {
		id      int64
		logID   *int64
		cfg     schema.Config
		metrics map[string]float64
	}
	q := a.level(strings.ReplaceAll(qAdoptAgentXRows, "{where}", where))
	rows, _ := a.tx.Query(ctx, q, append([]any{trace.ServerMetricInputs()}, args...)...)
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (agentxRow, error) {
		var x agentxRow
		c := &x.cfg
		var ptp, pw, dtp, dw int64
		err := r.Scan(&x.id, &x.logID, &c.Framework, &c.Disagg, &ptp, &c.PrefillDPAttention, &pw, &dtp, &c.DecodeDPAttention, &dw, &x.metrics)
		c.PrefillTP, c.PrefillNumWorkers, c.DecodeTP, c.DecodeNumWorkers = int(ptp), int(pw), int(dtp), int(dw)
		return x, err
	})
	if err != nil {
		return fmt.Errorf("read the AgentX rows: %w", err)
	}
	logs := map[int64][]trace.LogFileLines{}
	for _, x := range list {
		in := trace.RowInput(x.cfg, x.metrics)
		in.Scrape = scrape
		if x.logID != nil {
			lines, ok := logs[*x.logID]
			if !ok {
				if lines, err = a.startupLines(ctx, *x.logID); err != nil {
					return fmt.Errorf("server log %d: %w", *x.logID, err)
				}
				logs[*x.logID] = lines
			}
			in.Logs = lines
		}
		out, err := json.Marshal(trace.RowServerMetrics(x.metrics, trace.DeriveServerMetrics(in)))
		if err != nil {
			return fmt.Errorf("row %d: encode its server metrics: %w", x.id, err)
		}
		if _, err := a.tx.Exec(ctx, qAdoptServerMetricsRow, x.id, string(out)); err != nil {
			return fmt.Errorf("row %d: %w", x.id, err)
		}
	}
	return nil
}

// startupLines are the startup lines of the worker log files of
// reference server log id, in file name order, as the traces stage
// collects them from the artifact's files (a bundle without worker
// files: none, not nil).
func (a *adoption) startupLines(ctx context.Context, id int64) ([]trace.LogFileLines, error) {
	out := []trace.LogFileLines{}
	rows, _ := a.tx.Query(ctx, a.level(qAdoptLogFileTexts), id)
	var name, text string
	_, err := pgx.ForEachRow(rows, []any{&name, &text}, func() error {
		if _, _, ok := trace.WorkerOfLogFile(name); !ok {
			return nil
		}
		sl := trace.NewStartupLines()
		if _, err := io.WriteString(sl, text); err != nil {
			return err
		}
		_ = sl.Close()
		out = append(out, trace.LogFileLines{Name: name, Lines: sl.Lines})
		return nil
	})
	return out, err
}

// traceContext is the framework and disaggregation of the rows reference
// trace id serves, as the traces stage decides them: any row with
// per-source series decides.
func traceContext(ctx context.Context, q pgx.Tx, id int64) (trace.PointContext, error) {
	var pc trace.PointContext
	rows, _ := q.Query(ctx, qAdoptTraceContext, id)
	var fw string
	var disagg bool
	if _, err := pgx.ForEachRow(rows, []any{&fw, &disagg}, func() error {
		if !pc.PerSource() {
			pc = trace.PointContext{Framework: fw, Disagg: disagg}
		}
		return nil
	}); err != nil {
		return pc, fmt.Errorf("read the configs it serves: %w", err)
	}
	return pc, nil
}

// payloadInput is what the blob pass read for a trace's payloads: the
// profile (or why not) and the server metrics (or why not).
type payloadInput struct {
	profile    *trace.Profile
	profileErr error
	metrics    *trace.ServerMetrics
	metricsErr error
}

// payloads writes trace id's payloads (aggregate statistics, chart series,
// request timeline, derived metrics) from what the blob pass read with the
// traces stage's code, as an ingest of the same files computes them; the
// timeline is written in chunks. A profile our code cannot read keeps the
// reference's payloads (PayloadsKept).
func (a *adoption) payloads(ctx context.Context, id int64, digest []byte, in payloadInput) error {
	if in.profileErr != nil {
		a.s.log.Warn("adopted trace keeps the reference's payloads", zap.Int64("trace", id), zap.String("what", colProfile), zap.Error(in.profileErr))
		return a.keepPayloads(ctx, id)
	}
	sm := in.metrics
	if in.metricsErr != nil {
		// As in the traces stage: the trace goes without server-side series.
		a.s.log.Warn("adopted trace's server metrics export unreadable", zap.Int64("trace", id), zap.Error(in.metricsErr))
		sm = nil
	}
	profile := in.profile
	der, err := trace.Derive(profile, sm)
	if err != nil {
		a.s.log.Warn("adopted trace keeps the reference's payloads", zap.Int64("trace", id), zap.String("what", "derive payloads"), zap.Error(err))
		return a.keepPayloads(ctx, id)
	}
	timeline := profile.HasTimeline()
	if timeline {
		cw := &chunkWriter{ctx: ctx, tx: a.tx, digest: digest, sql: qAdoptTimelineChunk}
		if err := profile.WriteTimeline(cw); err != nil {
			return fmt.Errorf("write the request timeline: %w", err)
		}
		if err := cw.flush(); err != nil {
			return fmt.Errorf("write the request timeline: %w", err)
		}
	}
	var chart *string
	if der.ChartSeries != nil {
		c := string(der.ChartSeries)
		chart = &c
	}
	dm, err := json.Marshal(der.Metrics)
	if err != nil {
		return fmt.Errorf("encode the derived metrics: %w", err)
	}
	if _, err := a.tx.Exec(ctx, qAdoptTracePayloads, id, string(der.AggregateStats), chart, timeline, string(dm), der.KVCapacity); err != nil {
		return fmt.Errorf("write the payloads: %w", err)
	}
	if _, err := a.tx.Exec(ctx, qAdoptTimelineClear); err != nil {
		return fmt.Errorf("clear the request timeline: %w", err)
	}
	return nil
}

func (a *adoption) keepPayloads(ctx context.Context, id int64) error {
	a.res.PayloadsKept++
	if _, err := a.tx.Exec(ctx, qAdoptTraceKeep, id); err != nil {
		return fmt.Errorf("keep the reference's payloads: %w", err)
	}
	return nil
}

// storeGzipBlob stores gzip column col (n bytes) of reference trace row id
// as the trace blob of digest d (size bytes uncompressed): its bytes as
// stored, copied in the database.
func (a *adoption) storeGzipBlob(ctx context.Context, id int64, col string, n int64, d []byte, size int64) error {
	tag, err := a.tx.Exec(ctx, qAdoptBlobInsert, d, size, n, (n+blobChunk-1)/blobChunk)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	if n > 0 {
		if _, err := a.tx.Exec(ctx, fmt.Sprintf(qAdoptBlobChunks, col), id, d, blobChunk); err != nil {
			return err
		}
	}
	a.res.Blobs++
	a.res.BlobBytes += n
	return nil
}

// readErr counts the bytes read from r and keeps its first error other
// than io.EOF, returning it from then on: a parser that stops at a read
// error must not hide it as a parse error.
type readErr struct {
	r   io.Reader
	n   int64
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.r.Read(p)
	r.n += int64(n)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// rawBlob stores raw column col (n bytes) of trace row id as a trace blob,
// gzipped here, and returns its digest (sha256 of its bytes, taken in the
// database) and size. The column is read through the client once: its
// bytes go to parse (whose error is perr) and, for a blob not stored yet,
// to the gzip stream.
func (a *adoption) rawBlob(ctx context.Context, id int64, col string, n int64, parse func(io.Reader) error) (d []byte, size int64, perr, err error) {
	if err := a.tx.QueryRow(ctx, fmt.Sprintf(qAdoptBlobDigest, col), id).Scan(&d); err != nil {
		return nil, 0, nil, err
	}
	// The row first (chunks reference it), then the gzip stream in
	// chunks, then its stored size.
	tag, err := a.tx.Exec(ctx, qAdoptBlobInsert, d, n, 0, 0)
	if err != nil {
		return nil, 0, nil, err
	}
	fresh := tag.RowsAffected() > 0
	cw := &chunkWriter{ctx: ctx, tx: a.tx, digest: d}
	zw := gzip.NewWriter(cw)
	var sink io.Writer = zw
	if !fresh {
		sink = io.Discard
	}
	if _, perr, err = parseAll(&sliceReader{ctx: ctx, q: a.tx, id: id, col: col, n: n, read: &a.res.BlobBytesRead}, sink, parse); err != nil {
		return nil, 0, nil, err
	}
	if !fresh {
		return d, n, perr, nil
	}
	if err := zw.Close(); err != nil {
		return nil, 0, nil, err
	}
	if err := cw.flush(); err != nil {
		return nil, 0, nil, err
	}
	if _, err := a.tx.Exec(ctx, qAdoptBlobStoredSize, d, cw.stored, cw.seq); err != nil {
		return nil, 0, nil, err
	}
	a.res.Blobs++
	a.res.BlobBytes += cw.stored
	return d, n, perr, nil
}

// sliceReader reads a bytea column of one reference trace row a slice at
// a time through q, adding what it reads to *read.
type sliceReader struct {
	ctx  context.Context
	q    pgx.Tx
	id   int64
	col  string
	n    int64
	off  int64
	buf  []byte
	read *int64
}

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		if r.off >= r.n {
			return 0, io.EOF
		}
		var b []byte
		if err := r.q.QueryRow(r.ctx, fmt.Sprintf(qAdoptBlobSlice, r.col), r.id, r.off+1, blobChunk).Scan(&b); err != nil {
			return 0, err
		}
		if len(b) == 0 {
			return 0, io.ErrUnexpectedEOF
		}
		r.off += int64(len(b))
		*r.read += int64(len(b))
		r.buf = b
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// chunkWriter writes a blob's stored bytes as chunks of blobChunk, with
// sql (qAdoptChunkInsert when empty).
type chunkWriter struct {
	ctx    context.Context
	tx     pgx.Tx
	sql    string
	digest []byte
	buf    []byte
	seq    int32
	stored int64
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for len(w.buf) >= blobChunk {
		if err := w.put(w.buf[:blobChunk]); err != nil {
			return 0, err
		}
		w.buf = append(w.buf[:0], w.buf[blobChunk:]...)
	}
	return len(p), nil
}

func (w *chunkWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.put(w.buf)
	w.buf = w.buf[:0]
	return err
}

func (w *chunkWriter) put(b []byte) error {
	q := w.sql
	if q == "" {
		q = qAdoptChunkInsert
	}
	if _, err := w.tx.Exec(w.ctx, q, w.digest, w.seq, b); err != nil {
		return err
	}
	w.seq++
	w.stored += int64(len(b))
	return nil
}
