package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/golang-migrate/migrate/v4"
	pgxmigrate "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/migrations"
)

// MigrationStatus is the schema version a database is at.
type MigrationStatus struct {
	Version uint
	Dirty   bool
	// Latest is the newest version the binary carries.
	Latest uint
}

// withMigrator runs fn with a golang-migrate instance bound to this store's
// database, its version in MigrationsTable (golang-migrate creates the
// table when missing: callers claim the schema first). golang-migrate
// takes its own advisory lock, so concurrent processes migrate one at a
// time.
func (s *Store) withMigrator(ctx context.Context, fn func(*migrate.Migrate) error) error {
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	db := stdlib.OpenDBFromPool(s.pool)
	drv, err := pgxmigrate.WithInstance(db, &pgxmigrate.Config{MigrationsTable: MigrationsTable})
	if err != nil {
		db.Close()
		return fmt.Errorf("migrations: %w", err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "pgx5", drv)
	if err != nil {
		drv.Close()
		return fmt.Errorf("migrations: %w", err)
	}
	defer m.Close()
	stop := context.AfterFunc(ctx, func() {
		select {
		case m.GracefulStop <- true:
		default:
		}
	})
	defer stop()
	return fn(m)
}

// MigrateUp applies every pending migration. It reports how many versions
// it moved; "no change" is success.
//
// A database already at the binary's newest version, not dirty, is left
// alone after two reads (SchemaVersion): every `ingest load` migrates
// first, and golang-migrate's own no-op check takes a lock, creates its
// table if missing and reads the information schema. golang-migrate marks
// a migration in progress dirty at its target version, so a clean newest
// version means nothing is left to apply.
//
// A schema this program does not own is refused (ErrForeignSchema), and
// our version table of earlier builds moved, before anything else
// (claim). A dirty schema, or one at a version newer than the binary's, is
// refused with a message saying what to do (SchemaStatus.Problem), before
// golang-migrate is asked.
func (s *Store) MigrateUp(ctx context.Context) (from, to uint, err error) {
	lay, err := s.claim(ctx)
	if err != nil {
		return 0, 0, err
	}
	if cur, err := s.versionIn(ctx, lay); err == nil {
		if !cur.Dirty && cur.Version == cur.Latest && cur.Latest > 0 {
			return cur.Version, cur.Version, nil
		}
		if cur.Dirty || cur.Version > cur.Latest {
			return cur.Version, cur.Version, cur.Problem()
		}
	}
	err = s.withMigrator(ctx, func(m *migrate.Migrate) error {
		from, _, err = version(m)
		if err != nil {
			return err
		}
		if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
			return fmt.Errorf("migrate up: %w", err)
		}
		to, _, err = version(m)
		return err
	})
	if err == nil && from != to {
		s.log.Info("migrated", zap.Uint("from", from), zap.Uint("to", to))
	}
	return from, to, err
}

// ErrSchema marks a schema this binary must not write to: dirty, newer
// than the binary, or (without migrating first) older.
var ErrSchema = errors.New("schema not writable by this binary")

// ErrNotMigrated marks a schema older than the binary's newest migration
// (also ErrSchema): every write needs the newest schema, so a command run
// with --no-migrate refuses it and says to run "ingest migrate up".
// Its text is ErrSchema's.
var ErrNotMigrated = fmt.Errorf("%w", ErrSchema)

// Problem says why this binary must not write to a database at v, and
// what to do; nil when v is the binary's newest version, not dirty.
func (v MigrationStatus) Problem() error {
	switch {
	case v.Dirty:
		return fmt.Errorf("the database schema is dirty at version %d: a migration failed halfway. Repair what it left, "+
			"then record the version the schema is really at with \"ingest migrate force N\" (this binary carries 1 to %d): %w",
			v.Version, v.Latest, ErrSchema)
	case v.Version > v.Latest:
		return fmt.Errorf("the database schema is at version %d, newer than this binary's %d: a newer ingest migrated it, "+
			"and this binary does not write to it (use that ingest or a newer one): %w", v.Version, v.Latest, ErrSchema)
	case v.Version < v.Latest:
		return fmt.Errorf("the database is not migrated (schema version %d, this binary needs %d): every write needs "+
			"the newest schema; run \"ingest migrate up\" first: %w", v.Version, v.Latest, ErrNotMigrated)
	}
	return nil
}

// CheckWritable refuses, with Problem's message, a database this binary
// must not write to: one whose schema it does not own (ErrForeignSchema),
// a dirty schema, one newer than the binary, or one older than it
// (ErrNotMigrated: every write assumes the newest schema, so there is one
// code path per write); it moves our version table of earlier builds
// (claim). Every write path asks it after migrating, or instead of
// migrating with --no-migrate.
func (s *Store) CheckWritable(ctx context.Context) error {
	lay, err := s.claim(ctx)
	if err != nil {
		return err
	}
	v, err := s.versionIn(ctx, lay)
	if err != nil {
		return err
	}
	return v.Problem()
}

// MigrateForce records version v as the schema's, clean, without running
// anything: after a migration failed halfway and what it left was
// repaired by hand. v must be one the binary carries.
func (s *Store) MigrateForce(ctx context.Context, v uint) error {
	latest, err := LatestMigration()
	if err != nil {
		return err
	}
	if v < 1 || v > latest {
		return fmt.Errorf("migrate force: version %d is not one this binary carries (1 to %d)", v, latest)
	}
	if _, err := s.claim(ctx); err != nil {
		return err
	}
	return s.withMigrator(ctx, func(m *migrate.Migrate) error {
		if err := m.Force(int(v)); err != nil {
			return fmt.Errorf("migrate force %d: %w", v, err)
		}
		return nil
	})
}

// LatestMigration is the highest version embedded in the binary.
func LatestMigration() (uint, error) {
	all, err := embeddedVersions()
	if err != nil {
		return 0, err
	}
	return all[len(all)-1], nil
}

// embeddedVersions are the versions the binary carries, oldest first
// (numbers may have gaps: each feature owns its number).
func embeddedVersions() ([]uint, error) {
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	defer src.Close()
	v, err := src.First()
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	all := []uint{v}
	for {
		next, err := src.Next(v)
		if err != nil {
			return all, nil
		}
		all = append(all, next)
		v = next
	}
}

func version(m *migrate.Migrate) (uint, bool, error) {
	v, dirty, err := m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("migration version: %w", err)
	}
	return v, dirty, nil
}

// SchemaVersion reads the database's schema version without writing
// anything (golang-migrate's own check creates its table and takes a
// lock): version 0 when the database was never migrated. Our version
// table of earlier builds is read where it is; a schema this program does
// not own is ErrForeignSchema. A dry run and `ingest migrate version`
// ask it.
func (s *Store) SchemaVersion(ctx context.Context) (MigrationStatus, error) {
	inv, err := s.inventory(ctx, nil)
	if err != nil {
		return MigrationStatus{}, err
	}
	lay := inv.layout()
	if lay == layoutForeign {
		return MigrationStatus{}, s.foreign(ctx, nil, inv)
	}
	return s.versionIn(ctx, lay)
}

// versionIn reads the version row of the layout the schema is in.
func (s *Store) versionIn(ctx context.Context, lay layout) (MigrationStatus, error) {
	var st MigrationStatus
	latest, err := LatestMigration()
	if err != nil {
		return st, err
	}
	st.Latest = latest
	q := qSchemaVersion
	switch lay {
	case layoutEmpty:
		return st, nil
	case layoutLegacy:
		q = qLegacySchemaVersion
	case layoutForeign:
		return st, fmt.Errorf("read the schema version: %w", ErrForeignSchema)
	}
	var v int64
	err = s.pool.QueryRow(ctx, q).Scan(&v, &st.Dirty)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read the schema version: %w", err)
	}
	st.Version = uint(v)
	return st, nil
}
