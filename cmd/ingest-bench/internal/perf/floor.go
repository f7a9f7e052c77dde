package perf

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/store"
)

// The database floor of a first ingest: the least time PostgreSQL takes
// to store what the ingest stored, whatever the client does. The rows the
// first ingest wrote are copied out of its database (binary COPY … TO
// STDOUT, untimed), then into a fresh migrated database in one
// transaction (COPY … FROM STDIN, timed per table, with the ingest's lz4
// setting and with every index, constraint and trigger in place), and
// latest_benchmarks is refreshed the way the ingest refreshes it. No
// parsing, no staging, no deduplication: an ingest cannot be faster than
// this on the same machine.

// Floor is one measurement of the database floor.
type Floor struct {
	// Tables is the COPY of each table that held rows, in the order they
	// were copied (referenced tables first).
	Tables []FloorTable
	// Commit is the COMMIT of the transaction; Refresh the refresh of
	// latest_benchmarks after it.
	Commit, Refresh time.Duration
}

// FloorTable is the COPY of one table's rows.
type FloorTable struct {
	Name  string
	Rows  int64
	Bytes int64
	Took  time.Duration
}

// Total is the whole floor: every COPY, the commit and the refresh.
func (f Floor) Total() time.Duration {
	t := f.Commit + f.Refresh
	for _, tb := range f.Tables {
		t += tb.Took
	}
	return t
}

// notCopied says which tables the ingest does not copy rows into: the
// migrations' version, what the triggers fill in, and what the update of
// latest_benchmarks computes (the floor runs that update after the copy).
func notCopied(table string) bool {
	switch table {
	case "ingest_schema_migrations", "data_changes", "materialized_view_marks", "materialized_view_state",
		"benchmark_curves", "benchmark_curve_lines", "latest_benchmark_points":
		return true
	}
	return false
}

// floorCopyOut is the COPY reading a table's rows; of the ledger, only the
// first ingest's row (the reruns measured before the floor add theirs).
func floorCopyOut(table string) string {
	if table == "ingests" {
		return "COPY (SELECT * FROM ingests ORDER BY id LIMIT 1) TO STDOUT (FORMAT binary)"
	}
	return "COPY " + pgx.Identifier{table}.Sanitize() + " TO STDOUT (FORMAT binary)"
}

// cleanupTimeout bounds the statements that end the floor's work.
const cleanupTimeout = time.Minute

// cleanup is a context for them, alive when ctx is cancelled.
func cleanup(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}

// qFloorTables lists the base tables of the public schema and the tables
// each references (a foreign key to itself does not count).
const qFloorTables = `
SELECT c.relname, coalesce(array_agg(DISTINCT r.relname) FILTER (WHERE r.relname IS NOT NULL AND r.oid <> c.oid), '{}')
FROM pg_class c
LEFT JOIN pg_constraint k ON k.conrelid = c.oid AND k.contype = 'f'
LEFT JOIN pg_class r ON r.oid = k.confrelid
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
GROUP BY c.relname ORDER BY c.relname`

// measureFloor copies the rows of the database at url (a first ingest's,
// and its reruns', which wrote no data) into a fresh database, created,
// migrated and dropped here.
func measureFloor(ctx context.Context, cfg ProcessConfig, url string) (Floor, error) {
	var f Floor
	src, err := pgx.Connect(ctx, url)
	if err != nil {
		return f, fmt.Errorf("floor: connect to the ingest's database: %w", err)
	}
	defer func() {
		cctx, cancel := cleanup(ctx)
		defer cancel()
		src.Close(cctx)
	}()
	order, err := floorOrder(ctx, src)
	if err != nil {
		return f, err
	}
	// The rows go through a temporary file, not this process's memory:
	// the peak RSS of the ingest processes started after would count it
	// (processes.go, leanParent).
	spool, err := os.CreateTemp(cfg.Dir, "ingest-bench-floor-*")
	if err != nil {
		return f, fmt.Errorf("floor: the rows' temporary file: %w", err)
	}
	defer os.Remove(spool.Name())
	defer spool.Close()
	type dump struct {
		name      string
		rows      int64
		off, size int64
	}
	var dumps []dump
	var off int64
	for _, name := range order {
		tag, err := src.PgConn().CopyTo(ctx, spool, floorCopyOut(name))
		if err != nil {
			return f, fmt.Errorf("floor: copy %s out: %w", name, err)
		}
		end, err := spool.Seek(0, io.SeekCurrent)
		if err != nil {
			return f, fmt.Errorf("floor: copy %s out: the temporary file: %w", name, err)
		}
		if tag.RowsAffected() > 0 {
			dumps = append(dumps, dump{name, tag.RowsAffected(), off, end - off})
		}
		off = end
	}

	database := databaseName(cfg.DatabasePrefix, "floor_") + randomSuffix()
	dst, err := createDatabase(ctx, cfg.AdminURL, database, "")
	if err != nil {
		return f, err
	}
	defer func() {
		dctx, cancel := cleanup(ctx)
		defer cancel()
		if err := dropDatabase(dctx, cfg.AdminURL, database); err != nil {
			cfg.Log.Warn("could not drop the floor database", zap.String("database", database), zap.Error(err))
		}
	}()
	st, err := store.Open(ctx, dst, zap.NewNop())
	if err != nil {
		return f, err
	}
	defer st.Close()
	if _, _, err := st.MigrateUp(ctx); err != nil {
		return f, fmt.Errorf("floor: migrate: %w", err)
	}
	conn, err := pgx.Connect(ctx, dst)
	if err != nil {
		return f, fmt.Errorf("floor: connect to the floor database: %w", err)
	}
	defer func() {
		cctx, cancel := cleanup(ctx)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return f, fmt.Errorf("floor: begin: %w", err)
	}
	defer func() {
		cctx, cancel := cleanup(ctx)
		defer cancel()
		_ = tx.Rollback(cctx) // a no-op after the commit
	}()
	if _, err := tx.Exec(ctx, qFastToast); err != nil {
		return f, fmt.Errorf("floor: set lz4 compression: %w", err)
	}
	for _, d := range dumps {
		began := time.Now()
		tag, err := tx.Conn().PgConn().CopyFrom(ctx, io.NewSectionReader(spool, d.off, d.size), "COPY "+pgx.Identifier{d.name}.Sanitize()+" FROM STDIN (FORMAT binary)")
		if err != nil {
			return f, fmt.Errorf("floor: copy %s in: %w", d.name, err)
		}
		if tag.RowsAffected() != d.rows {
			return f, fmt.Errorf("floor: copy %s in: %d rows of %d", d.name, tag.RowsAffected(), d.rows)
		}
		f.Tables = append(f.Tables, FloorTable{Name: d.name, Rows: d.rows, Bytes: d.size, Took: time.Since(began)})
	}
	began := time.Now()
	if err := tx.Commit(ctx); err != nil {
		return f, fmt.Errorf("floor: commit: %w", err)
	}
	f.Commit = time.Since(began)
	// The refresh goes through the store, as the ingest's does.
	began = time.Now()
	if _, err := st.RefreshLatestBenchmarks(ctx, true); err != nil {
		return f, fmt.Errorf("floor: refresh: %w", err)
	}
	f.Refresh = time.Since(began)
	return f, nil
}

// floorOrder lists the tables to copy, every table after those it
// references.
func floorOrder(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	rows, err := conn.Query(ctx, qFloorTables)
	if err != nil {
		return nil, fmt.Errorf("floor: list tables: %w", err)
	}
	refs := map[string][]string{}
	var names []string
	for rows.Next() {
		var name string
		var to []string
		if err := rows.Scan(&name, &to); err != nil {
			return nil, fmt.Errorf("floor: list tables: %w", err)
		}
		if !notCopied(name) {
			names, refs[name] = append(names, name), to
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("floor: list tables: %w", err)
	}
	var order []string
	done := map[string]bool{}
	var visit func(name string, path []string) error
	visit = func(name string, path []string) error {
		if done[name] {
			return nil
		}
		if slices.Contains(path, name) {
			return fmt.Errorf("floor: foreign keys form a cycle: %v", append(path, name))
		}
		for _, r := range refs[name] {
			if err := visit(r, append(path, name)); err != nil {
				return err
			}
		}
		done[name] = true
		if _, ok := refs[name]; ok {
			order = append(order, name)
		}
		return nil
	}
	for _, n := range names {
		if err := visit(n, nil); err != nil {
			return nil, err
		}
	}
	return order, nil
}
