package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inferencex/ingest/schema"
)

// Address names the database a connection URL reaches — host, port and
// database name, never the user or password — so that two URLs can be
// compared and a database named in a message. An unparseable URL has no
// address ("").
func Address(url string) string {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return ""
	}
	c := cfg.ConnConfig
	return fmt.Sprintf("%s:%d/%s", c.Host, c.Port, c.Database)
}

// Identity is what the server this store reaches says it is (see
// schema.ServerIdentity): two URLs reach one database exactly when their
// identities are the Same, whatever their host names.
func (s *Store) Identity(ctx context.Context) (schema.ServerIdentity, error) {
	var id schema.ServerIdentity
	var system bool
	if err := s.pool.QueryRow(ctx, qServerIdentity).Scan(&id.Database, &id.Port, &id.Started, &system); err != nil {
		return id, s.opts.explain("read the server's identity", err)
	}
	if system {
		if err := s.pool.QueryRow(ctx, qSystemIdentifier).Scan(&id.SystemID); err != nil {
			return id, s.opts.explain("read the server's system identifier", err)
		}
	}
	return id, nil
}
