package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
)

// ErrForeignSchema marks a database whose schema this program does not
// own: the reference ingest's, or any non-empty schema without our version
// table. Nothing writes to it; `ingest adopt` is the way to take one over.
var ErrForeignSchema = errors.New(`not this program's schema, so nothing was written ("ingest adopt" takes such a database over)`)

// layout is what the current schema holds, as far as ownership goes.
type layout int

const (
	layoutEmpty   layout = iota // nothing: ours to migrate
	layoutOurs                  // ingest_schema_migrations
	layoutLegacy                // our schema, its version in golang-migrate's default table
	layoutForeign               // anything else: refused
)

// legacyColumns is the shape of golang-migrate's default version table.
var legacyColumns = []string{"version bigint", "dirty boolean"}

// inventory is one look at the current schema (qSchemaInventory).
type inventory struct {
	schema    string
	ours      bool
	legacy    []string // columns of schema_migrations, "name type"
	ledger    bool     // our ingests table
	relations int64
	sample    []string
}

func (s *Store) inventory(ctx context.Context, q pgx.Tx) (inventory, error) {
	var inv inventory
	row := s.pool.QueryRow
	if q != nil {
		row = q.QueryRow
	}
	err := row(ctx, qSchemaInventory).Scan(&inv.schema, &inv.ours, &inv.legacy, &inv.ledger, &inv.relations, &inv.sample)
	if err != nil {
		return inv, fmt.Errorf("read the database's schema: %w", err)
	}
	return inv, nil
}

// layout classifies the schema. Our legacy layout is golang-migrate's
// table in its own shape beside our ledger, or alone (an earlier build
// migrated all the way down).
func (inv inventory) layout() layout {
	switch {
	case inv.ours:
		return layoutOurs
	case slices.Equal(inv.legacy, legacyColumns) && (inv.ledger || inv.relations == 1):
		return layoutLegacy
	case inv.relations == 0:
		return layoutEmpty
	}
	return layoutForeign
}

// isReference recognises the reference ingest's bookkeeping:
// schema_migrations(filename text, applied_at timestamptz).
func (inv inventory) isReference() bool {
	return slices.Contains(inv.legacy, "filename text") && slices.Contains(inv.legacy, "applied_at timestamp with time zone")
}

// foreign says what a schema this program does not own holds.
func (s *Store) foreign(ctx context.Context, q pgx.Tx, inv inventory) error {
	if inv.isReference() {
		row := s.pool.QueryRow
		if q != nil {
			row = q.QueryRow
		}
		var last string
		if err := row(ctx, qReferenceLastMigration).Scan(&last); err != nil {
			return fmt.Errorf("read the reference ingest's schema_migrations: %w", err)
		}
		if last == "" {
			last = "none recorded"
		}
		return fmt.Errorf("the database holds the reference ingest's schema, last migration %s (%d tables and views in %s): %w",
			last, inv.relations, inv.schema, ErrForeignSchema)
	}
	return fmt.Errorf("the database holds a schema this program does not own (%d tables in %s, e.g. %s; no %s): %w",
		inv.relations, inv.schema, strings.Join(inv.sample, ", "), MigrationsTable, ErrForeignSchema)
}

// CheckOwned refuses, writing nothing, a database whose schema this
// program does not own (ErrForeignSchema). An empty database, ours, or
// ours in the legacy layout pass. Read-only commands ask it so that they
// say what they found instead of failing on a missing table.
func (s *Store) CheckOwned(ctx context.Context) error {
	inv, err := s.inventory(ctx, nil)
	if err != nil {
		return err
	}
	if inv.layout() == layoutForeign {
		return s.foreign(ctx, nil, inv)
	}
	return nil
}

// claim is asked before anything writes: it refuses a schema this program
// does not own and moves our legacy version table (schema_migrations) to
// MigrationsTable, in one transaction, version and dirty flag kept. It
// returns the layout the schema is then in.
func (s *Store) claim(ctx context.Context) (layout, error) {
	inv, err := s.inventory(ctx, nil)
	if err != nil {
		return 0, err
	}
	switch lay := inv.layout(); lay {
	case layoutForeign:
		return lay, s.foreign(ctx, nil, inv)
	case layoutLegacy:
		return s.moveLegacyVersionTable(ctx)
	default:
		return lay, nil
	}
}

func (s *Store) moveLegacyVersionTable(ctx context.Context) (layout, error) {
	lay, moved := layoutLegacy, false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, qLockVersionTableMove); err != nil {
			return err
		}
		inv, err := s.inventory(ctx, tx)
		if err != nil {
			return err
		}
		if lay = inv.layout(); lay != layoutLegacy {
			if lay == layoutForeign {
				return s.foreign(ctx, tx, inv)
			}
			return nil // another process moved it meanwhile
		}
		for _, q := range []string{qLockLegacyVersion, qCreateVersionTable, qCopyLegacyVersion, qDropLegacyVersion} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		lay, moved = layoutOurs, true
		return nil
	})
	if err != nil {
		return lay, fmt.Errorf("move the schema version from %s to %s: %w", legacyMigrationsTable, MigrationsTable, err)
	}
	if moved {
		s.log.Info("schema version table moved", zap.String("from", legacyMigrationsTable), zap.String("to", MigrationsTable))
	}
	return lay, nil
}
