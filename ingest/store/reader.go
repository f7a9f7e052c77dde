package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ReaderPlan is what `ingest reader create` does for one role: the
// statements, in order, and whether the role is created or brought in line.
type ReaderPlan struct {
	Role       string
	Database   string
	Exists     bool
	Statements []string
}

// PlanReader checks that role may become the dashboard's reader and lists
// the statements that make it one: LOGIN without any attribute that
// writes, search_path preset to "dashboard, public" and read-only
// transactions by default, SELECT on every table and view of the schemas
// the dashboard reads (and on those later migrations create), nothing
// else. A superuser, a role that may create roles or databases or bypass
// row security, a member of another role or the owner of a table there is
// refused: privileges alone could not keep it from changing rows.
func (s *Store) PlanReader(ctx context.Context, role string) (ReaderPlan, error) {
	p := ReaderPlan{Role: role}
	if role == "" || strings.IndexByte(role, 0) >= 0 || len(role) > 63 {
		return p, fmt.Errorf("reader role %q: a role name is 1 to 63 bytes without NUL", role)
	}
	var powerful bool
	var memberOf []string
	var owns int64
	if err := s.pool.QueryRow(ctx, qReaderRole, role).Scan(&p.Database, &p.Exists, &powerful, &memberOf, &owns); err != nil {
		return p, fmt.Errorf("reader role %s: %w", role, err)
	}
	switch {
	case powerful:
		return p, fmt.Errorf("reader role %s exists with SUPERUSER, BYPASSRLS, CREATEROLE, CREATEDB or REPLICATION: "+
			"it could change rows whatever it is granted; choose another name", role)
	case len(memberOf) > 0:
		return p, fmt.Errorf("reader role %s is a member of %s: it would hold their privileges; choose another name",
			role, strings.Join(memberOf, ", "))
	case owns > 0:
		return p, fmt.Errorf("reader role %s owns %d table(s) or view(s) of the dashboard's schemas: an owner can change them; choose another name",
			role, owns)
	}
	r, db := pgx.Identifier{role}.Sanitize(), pgx.Identifier{p.Database}.Sanitize()
	if !p.Exists {
		p.Statements = append(p.Statements, "CREATE ROLE "+r+" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS")
	}
	p.Statements = append(p.Statements,
		"ALTER ROLE "+r+" SET search_path = dashboard, public",
		"ALTER ROLE "+r+" SET default_transaction_read_only = on",
		"GRANT CONNECT ON DATABASE "+db+" TO "+r,
		"REVOKE CREATE ON SCHEMA public, dashboard FROM "+r,
		"GRANT USAGE ON SCHEMA public, dashboard TO "+r,
		"REVOKE ALL ON ALL TABLES IN SCHEMA public, dashboard FROM "+r,
		"REVOKE ALL ON ALL SEQUENCES IN SCHEMA public, dashboard FROM "+r,
		"GRANT SELECT ON ALL TABLES IN SCHEMA public, dashboard TO "+r,
		"ALTER DEFAULT PRIVILEGES IN SCHEMA public, dashboard GRANT SELECT ON TABLES TO "+r,
	)
	return p, nil
}

// ApplyReader runs a plan in one transaction, then checks, as the
// database sees it, that the role can read every table and view of the
// dashboard's schemas and change none (a grant to PUBLIC would show
// here); otherwise nothing is kept.
func (s *Store) ApplyReader(ctx context.Context, p ReaderPlan) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("reader role %s: %w", p.Role, err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit a no-op
	for _, q := range p.Statements {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("reader role %s: %s: %w", p.Role, q, err)
		}
	}
	rows, err := tx.Query(ctx, qReaderWrites, p.Role)
	if err != nil {
		return fmt.Errorf("reader role %s: check privileges: %w", p.Role, err)
	}
	var bad []string
	var name string
	var reads, writes bool
	if _, err := pgx.ForEachRow(rows, []any{&name, &reads, &writes}, func() error {
		switch {
		case writes:
			bad = append(bad, name+" (can change it: a grant to PUBLIC?)")
		case !reads:
			bad = append(bad, name+" (cannot read it)")
		}
		return nil
	}); err != nil {
		return fmt.Errorf("reader role %s: check privileges: %w", p.Role, err)
	}
	if len(bad) > 0 {
		return fmt.Errorf("reader role %s: nothing kept: %s", p.Role, strings.Join(bad, "; "))
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("reader role %s: %w", p.Role, err)
	}
	return nil
}
