package compare

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/ingest/ptr"
	"github.com/inferencex/ingest/schema"
)

// ErrNotASchema is returned for a database that holds neither our schema
// nor the reference's.
var ErrNotASchema = errors.New("the database holds neither our schema (no ingests table) nor the reference's (no schema_migrations.filename)")

// target is what the database holds for the run.
type target struct {
	schema string
	level  string
	rows   side
	// evalKeys names the eval rows by id, for their samples.
	evalKeys map[int64]string
	// changelog is keyed once the tree's entries are known: the
	// reference's rows have no entry index.
	changelog []refChangelog
	// unnamedLogs are the primary log files of a reference before 013,
	// named once the tree's are known.
	unnamedLogs []unnamedLog
}

type unnamedLog struct {
	bench  string
	values map[string]any
}

type refChangelog struct {
	base, head string
	index      int // -1: the reference's, which has no index
	values     map[string]any
}

// readTarget reads the run's rows in one READ ONLY transaction, which it
// rolls back.
func readTarget(ctx context.Context, conn *pgx.Conn, runID int64, attempt int) (*target, error) {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return nil, fmt.Errorf("begin read-only transaction: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// Both schemas are read in public (qDetect). The site's reader role
	// (ingest reader create) puts schema dashboard first, whose views give
	// the reference's columns back under the same names: compare must not
	// read those.
	if _, err := tx.Exec(ctx, qSearchPath); err != nil {
		return nil, fmt.Errorf("set search_path: %w", err)
	}
	t := &target{rows: side{}}
	var ours, ref bool
	if err := tx.QueryRow(ctx, qDetect).Scan(&ours, &ref); err != nil {
		return nil, fmt.Errorf("detect schema: %w", err)
	}
	switch {
	case ours:
		t.schema = SchemaOurs
	case ref:
		t.schema = SchemaReference
		if err := tx.QueryRow(ctx, qReferenceLevel).Scan(&t.level); err != nil {
			return nil, fmt.Errorf("read reference level: %w", err)
		}
	default:
		return nil, ErrNotASchema
	}
	q := func(o, r string) string {
		if t.schema == SchemaOurs {
			return o
		}
		return r
	}
	var wid int64
	var headSHA, url, conclusion *string
	err = tx.QueryRow(ctx, qRun, runID, attempt).Scan(&wid, &headSHA, &url, &conclusion)
	if errors.Is(err, pgx.ErrNoRows) {
		return t, nil // every row of the tree is then only ours
	}
	if err != nil {
		return nil, fmt.Errorf("read workflow_runs: %w", err)
	}
	t.rows.put(TableRuns, runKey(runID, attempt), &row{values: map[string]any{
		"head_sha": strOrNil(headSHA), "html_url": strOrNil(url), "conclusion": strOrNil(conclusion)}})
	reads := []struct {
		table string
		sql   string
		scan  func(pgx.Rows) error
	}{
		{TableBenchmarks, qBenchmarks, t.scanBenchmark},
		{TableEvals, qEvals, t.scanEval},
		{TableEvalSamples, q(qSamplesOurs, qSamplesReference), t.scanSample},
		{TableChangelog, q(qChangelogOurs, qChangelogReference), t.scanChangelog},
		{TableRunStats, q(qRunStatsOurs, qRunStatsReference), t.scanRunStat},
		{TableTraces, q(qTracesOurs, qTracesReference), t.scanTrace},
		{TableServerLogs, q(qLogsOurs, logsReference(t.level)), t.scanLog},
	}
	t.evalKeys = map[int64]string{}
	for _, r := range reads {
		rows, err := tx.Query(ctx, r.sql, wid)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", r.table, err)
		}
		for rows.Next() {
			if err := r.scan(rows); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read %s: %w", r.table, err)
			}
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w", r.table, err)
		}
	}
	return t, nil
}

func runKey(id int64, attempt int) string { return fmt.Sprintf("run %d attempt %d", id, attempt) }

func (t *target) scanBenchmark(rows pgx.Rows) error {
	var c schema.Config
	var btype, offload string
	var isl, osl *int
	var conc int
	var image *string
	var metrics map[string]any
	if err := rows.Scan(append(c.KeyFields(), &btype, &isl, &osl, &conc, &offload, &image, &metrics)...); err != nil {
		return err
	}
	v := map[string]any{"image": strOrNil(image)}
	putMetrics(v, metrics)
	t.rows.put(TableBenchmarks, benchmarkKey(c, btype, isl, osl, conc, offload), &row{values: v,
		agentx: btype == schema.BenchmarkAgenticTraces})
	return nil
}

func (t *target) scanEval(rows pgx.Rows) error {
	var id int64
	var c schema.Config
	var task string
	var isl, osl, conc *int
	var version *string
	var metrics map[string]any
	if err := rows.Scan(append(append([]any{&id}, c.KeyFields()...), &task, &isl, &osl, &conc, &version, &metrics)...); err != nil {
		return err
	}
	k := evalKey(c, task, isl, osl, conc)
	t.evalKeys[id] = k
	v := map[string]any{"lm_eval_version": strOrNil(version)}
	putMetrics(v, metrics)
	t.rows.put(TableEvals, k, &row{values: v, group: c.Model + " " + evalSeq(task, isl, osl, conc)})
	return nil
}

func (t *target) scanSample(rows pgx.Rows) error {
	var id int64
	var doc int
	var filter string
	var tgt, resp *string
	var score *float64
	var passed *bool
	if err := rows.Scan(&id, &doc, &filter, &tgt, &resp, &score, &passed); err != nil {
		return err
	}
	ek := t.evalKeys[id]
	v := map[string]any{"target": textDigest(tgt), "response": textDigest(resp), "score": nil, "passed": nil}
	if score != nil {
		v["score"] = *score
	}
	if passed != nil {
		v["passed"] = *passed
	}
	t.rows.put(TableEvalSamples, sampleKey(ek, doc, filter), &row{group: ek, values: v})
	return nil
}

func (t *target) scanChangelog(rows pgx.Rows) error {
	var base, head, desc string
	var index int
	var keys []string
	var pr *string
	if err := rows.Scan(&base, &head, &index, &desc, &keys, &pr); err != nil {
		return err
	}
	t.changelog = append(t.changelog, refChangelog{base: base, head: head, index: index,
		values: changelogValues(desc, keys, pr)})
	return nil
}

func (t *target) scanRunStat(rows pgx.Rows) error {
	var cluster, hw string
	var ok, total int
	if err := rows.Scan(&cluster, &hw, &ok, &total); err != nil {
		return err
	}
	t.rows.put(TableRunStats, cluster, &row{group: hw, values: map[string]any{
		"hardware": hw, "n_success": float64(ok), "total": float64(total)}})
	return nil
}

// logsReference is the reference's server-log read at level: its
// server_log_files table arrived with 013_server_log_files.sql.
func logsReference(level string) string {
	if level < "013" {
		return qLogsReference010
	}
	return qLogsReference
}

func scanBenchKey(rows pgx.Rows, more ...any) (string, error) {
	var c schema.Config
	var btype, offload string
	var isl, osl *int
	var conc int
	if err := rows.Scan(append(append(c.KeyFields(), &btype, &isl, &osl, &conc, &offload), more...)...); err != nil {
		return "", err
	}
	return benchmarkKey(c, btype, isl, osl, conc, offload), nil
}

func (t *target) scanTrace(rows pgx.Rows) error {
	if t.schema == SchemaOurs {
		var profile, metricsJSON, csv, aiperf []byte
		var profileSize, jsonSize, csvSize *int64 // NULL with no such file (an adopted trace may lack its profile)
		var layout string
		k, err := scanBenchKey(rows, &profile, &profileSize, &metricsJSON, &jsonSize, &csv, &csvSize, &aiperf, &layout)
		if err != nil {
			return err
		}
		t.rows.put(TableTraces, k, &row{layout: layout, values: traceValues(profile, ptr.Deref(profileSize), metricsJSON, ptr.Deref(jsonSize),
			csv, ptr.Deref(csvSize), aiperf, layout)})
		return nil
	}
	var profileGz, jsonGz, csv []byte
	var profileSize, jsonSize, csvSize *int64
	k, err := scanBenchKey(rows, &profileGz, &profileSize, &jsonGz, &jsonSize, &csv, &csvSize)
	if err != nil {
		return err
	}
	profile, err := gunzipDigest(profileGz)
	if err != nil {
		return fmt.Errorf("trace of %s: profile_export_jsonl_gz: %w", k, err)
	}
	metricsJSON, err := gunzipDigest(jsonGz)
	if err != nil {
		return fmt.Errorf("trace of %s: server_metrics_json_gz: %w", k, err)
	}
	v := traceValues(profile, ptr.Deref(profileSize), metricsJSON, ptr.Deref(jsonSize), csv, ptr.Deref(csvSize), nil, "")
	t.rows.put(TableTraces, k, &row{values: v})
	return nil
}

func (t *target) scanLog(rows pgx.Rows) error {
	var name string
	var primary bool
	var digest []byte
	var size int64
	k, err := scanBenchKey(rows, &name, &primary, &digest, &size)
	if err != nil {
		return err
	}
	v := map[string]any{"text": shortDigest(digest), "size": float64(size)}
	if name == "" {
		t.unnamedLogs = append(t.unnamedLogs, unnamedLog{bench: k, values: v})
		return nil
	}
	t.rows.put(TableServerLogs, logKey(k, name), &row{group: k, primary: primary, values: v})
	return nil
}

// gunzipDigest is the sha256 of a gzip stream's uncompressed bytes, nil
// for none.
func gunzipDigest(gz []byte) ([]byte, error) {
	if gz == nil {
		return nil, nil
	}
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return nil, err
	}
	return h.Sum(nil), r.Close()
}
