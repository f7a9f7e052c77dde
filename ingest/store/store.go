// Package store is the PostgreSQL side of the ingest: migrations, the one
// transaction a run is written in, and the ingest ledger.
package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// Store is a connection pool to the ingest database.
type Store struct {
	pool *pgxpool.Pool
	url  string
	log  *zap.Logger
	opts Options
}

// Open connects to the database at url with the default options and
// checks that it answers.
func Open(ctx context.Context, url string, log *zap.Logger) (*Store, error) {
	return OpenWith(ctx, url, DefaultOptions(), log)
}

// OpenWith connects to the database at url, every connection set up with
// opts and application_name=ingest, and checks that it answers.
func OpenWith(ctx context.Context, url string, opts Options, log *zap.Logger) (*Store, error) {
	if err := CheckTimeout(opts.LockTimeout); err != nil {
		return nil, fmt.Errorf("lock timeout: %w", err)
	}
	if err := CheckTimeout(opts.StatementTimeout); err != nil {
		return nil, fmt.Errorf("statement timeout: %w", err)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", redact(err))
	}
	opts.setSession(cfg.ConnConfig.RuntimeParams)
	if cfg.MaxConns > 4 {
		cfg.MaxConns = 4
	}
	// A backfill worker holds a claim while its ingest writes and the
	// ledger is read: three connections at once for each run it works
	// on. Fewer would deadlock.
	if need := 3 * int32(max(opts.Jobs, 1)); cfg.MaxConns < need {
		cfg.MaxConns = need
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", describe(cfg.ConnConfig), err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to %s: %w", describe(cfg.ConnConfig), err)
	}
	return &Store{pool: pool, url: url, log: log.Named("store"), opts: opts}, nil
}

// Close releases every connection.
func (s *Store) Close() { s.pool.Close() }

// describe names a database without its password.
func describe(c *pgx.ConnConfig) string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}

// redact drops the connection string from parse errors, which may echo a
// password.
func redact(err error) error {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		return errors.New("cannot parse the connection string (check its syntax)")
	}
	return err
}
