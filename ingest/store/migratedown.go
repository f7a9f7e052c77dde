package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/migrations"
)

// ErrDownTooFar marks a down migration of more steps than there are
// migrations at or below the database's version: refused before anything
// runs (golang-migrate would revert them all, then fail).
var ErrDownTooFar = errors.New("more steps than migrations")

// DownPlan is what reverting the newest migrations would do, learned by
// rehearsing them (PlanDown).
type DownPlan struct {
	From     uint   // the version now
	Versions []uint // the versions reverted, newest first
	To       uint   // the version after (0: none)
	Drops    []Drop // the tables and columns the down migrations drop
}

// Drop is a table (Column empty) or a column a down migration drops, with
// the rows it holds now: all of a table's, a column's non-null values.
type Drop struct {
	Schema, Table, Column string
	Rows                  int64
	// Bookkeeping is a table of the schema's own bookkeeping
	// (bookkeepingTables): its rows are not loaded data.
	Bookkeeping bool
}

// bookkeepingTables hold only what the migrations seed and the triggers
// note about transactions and refreshes, never loaded data: dropping them
// with the schema that needs them loses nothing an operator loaded, so it
// needs no confirmation. A fresh database has rows in two of them.
var bookkeepingTables = map[string]bool{"data_changes": true, "materialized_view_marks": true, "materialized_view_state": true}

func (d Drop) String() string {
	name := d.Table
	if d.Schema != "public" {
		name = d.Schema + "." + d.Table
	}
	what := "rows"
	if d.Bookkeeping {
		what = "rows of bookkeeping"
	}
	if d.Column != "" {
		return fmt.Sprintf("column %s.%s (%d non-null values)", name, d.Column, d.Rows)
	}
	return fmt.Sprintf("table %s (%d %s)", name, d.Rows, what)
}

// Reverts lists the versions the plan reverts, newest first.
func (p DownPlan) Reverts() string { return joinVersions(p.Versions) }

// LosesRows reports whether the plan drops a table or column holding data.
func (p DownPlan) LosesRows() bool {
	return slices.ContainsFunc(p.Drops, func(d Drop) bool { return d.Rows > 0 && !d.Bookkeeping })
}

// DownError is a down migration that failed after others were reverted
// (Reverted may be empty).
type DownError struct {
	Reverted []uint // newest first
	Failed   uint   // the version whose down migration failed
	Err      error
}

func (e *DownError) Error() string {
	if len(e.Reverted) == 0 {
		return fmt.Sprintf("migrate down: the down migration of version %d failed, nothing was reverted: %v", e.Failed, e.Err)
	}
	return fmt.Sprintf("migrate down: reverted %s, then the down migration of version %d failed: %v",
		joinVersions(e.Reverted), e.Failed, e.Err)
}

func (e *DownError) Unwrap() error { return e.Err }

func joinVersions(vs []uint) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ", ")
}

// downVersions are the versions reverting steps migrations from cur
// undoes, newest first, and the version left. It refuses a schema this
// binary must not touch and more steps than there are migrations.
func downVersions(cur MigrationStatus, steps int) (reverted []uint, to uint, err error) {
	if steps < 1 {
		return nil, 0, fmt.Errorf("migrate down: steps must be at least 1, got %d", steps)
	}
	if cur.Dirty || cur.Version > cur.Latest {
		return nil, 0, cur.Problem()
	}
	all, err := embeddedVersions()
	if err != nil {
		return nil, 0, err
	}
	below := all[:0:0]
	for _, v := range all {
		if v <= cur.Version {
			below = append(below, v)
		}
	}
	if cur.Version > 0 && (len(below) == 0 || below[len(below)-1] != cur.Version) {
		return nil, 0, fmt.Errorf("migrate down: the database is at version %d, which this binary does not carry (a forced version?): %w",
			cur.Version, ErrSchema)
	}
	if steps > len(below) {
		return nil, 0, fmt.Errorf("ingest migrate down %d: %w: the database is at version %d, with %d migrations at or below it "+
			"(\"ingest migrate down %d\" reverts them all); nothing was run", steps, ErrDownTooFar, cur.Version, len(below), len(below))
	}
	reverted = slices.Clone(below[len(below)-steps:])
	slices.Reverse(reverted)
	if steps < len(below) {
		to = below[len(below)-steps-1]
	}
	return reverted, to, nil
}

// PlanDown works out what reverting the newest steps migrations would
// drop, running nothing that stays: it runs their down migrations in one
// transaction, compares the tables and columns before and after, and rolls
// back; then it counts the rows of what went. The rehearsal is PostgreSQL
// itself executing the files, so a drop by CASCADE, in a DO block or of a
// whole schema is seen as surely as a plain DROP TABLE, and a down
// migration that would fail fails here, before anything ran. It costs the
// work of the down migrations once more, under the same locks: reverting
// is rare and destructive, so certainty is worth it.
func (s *Store) PlanDown(ctx context.Context, steps int) (DownPlan, error) {
	cur, err := s.SchemaVersion(ctx)
	if err != nil {
		return DownPlan{}, err
	}
	plan := DownPlan{From: cur.Version}
	plan.Versions, plan.To, err = downVersions(cur, steps)
	if err != nil {
		return plan, err
	}
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return plan, fmt.Errorf("migrations: %w", err)
	}
	defer src.Close()
	var gone []Drop
	var inSchema string
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&inSchema); err != nil {
			return fmt.Errorf("read the current schema: %w", err)
		}
		before, err := columns(ctx, tx)
		if err != nil {
			return err
		}
		for _, v := range plan.Versions {
			r, _, err := src.ReadDown(v)
			if err != nil {
				return fmt.Errorf("migrations: the down migration of version %d: %w", v, err)
			}
			body, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				return fmt.Errorf("migrations: the down migration of version %d: %w", v, err)
			}
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return fmt.Errorf("migrate down: the down migration of version %d would fail (rehearsed in a transaction, "+
					"rolled back; nothing was run): %w", v, err)
			}
		}
		after, err := columns(ctx, tx)
		if err != nil {
			return err
		}
		gone = dropped(before, after)
		return errRehearsed // roll back
	})
	if !errors.Is(err, errRehearsed) {
		return plan, err
	}
	for _, d := range gone {
		q := "SELECT count(*) FROM " + pgx.Identifier{d.Schema, d.Table}.Sanitize()
		if d.Column != "" {
			q = "SELECT count(" + pgx.Identifier{d.Column}.Sanitize() + ") FROM " + pgx.Identifier{d.Schema, d.Table}.Sanitize()
		}
		d.Bookkeeping = d.Column == "" && d.Schema == inSchema && bookkeepingTables[d.Table]
		if err := s.pool.QueryRow(ctx, q).Scan(&d.Rows); err != nil {
			return plan, fmt.Errorf("migrate down: count the rows of %s: %w", d, err)
		}
		plan.Drops = append(plan.Drops, d)
	}
	return plan, nil
}

// errRehearsed rolls the rehearsal's transaction back.
var errRehearsed = errors.New("rehearsal rolled back")

// columns lists schema, table, column of every table (qColumns); a table
// without columns lists once with an empty column.
func columns(ctx context.Context, tx pgx.Tx) ([]Drop, error) {
	rows, err := tx.Query(ctx, qColumns)
	if err != nil {
		return nil, fmt.Errorf("list the tables: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Drop, error) {
		var d Drop
		err := r.Scan(&d.Schema, &d.Table, &d.Column)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("list the tables: %w", err)
	}
	return out, nil
}

// dropped is what before has and after lacks: whole tables (by name), and
// the columns gone from tables still there.
func dropped(before, after []Drop) []Drop {
	type table struct{ schema, name string }
	tables := map[table]bool{}
	cols := map[Drop]bool{}
	for _, d := range after {
		tables[table{d.Schema, d.Table}] = true
		cols[d] = true
	}
	var out []Drop
	seen := map[table]bool{}
	for _, d := range before {
		t := table{d.Schema, d.Table}
		switch {
		case !tables[t]:
			if !seen[t] {
				seen[t] = true
				out = append(out, Drop{Schema: d.Schema, Table: d.Table})
			}
		case d.Column != "" && !cols[d]:
			out = append(out, d)
		}
	}
	return out
}

// MigrateDown reverts the newest steps migrations, one at a time, so that
// a failure says what was reverted before it (a *DownError); steps beyond
// the migrations at or below the database's version are refused before
// anything runs (ErrDownTooFar). PlanDown says beforehand which versions
// it reverts and what they drop.
func (s *Store) MigrateDown(ctx context.Context, steps int) error {
	lay, err := s.claim(ctx)
	if err != nil {
		return err
	}
	cur, err := s.versionIn(ctx, lay)
	if err != nil {
		return err
	}
	want, _, err := downVersions(cur, steps)
	if err != nil {
		return err
	}
	var reverted []uint
	return s.withMigrator(ctx, func(m *migrate.Migrate) error {
		for _, v := range want {
			if err := ctx.Err(); err != nil {
				return &DownError{Reverted: reverted, Failed: v, Err: err}
			}
			if err := m.Steps(-1); err != nil {
				return &DownError{Reverted: reverted, Failed: v, Err: err}
			}
			reverted = append(reverted, v)
		}
		return nil
	})
}
