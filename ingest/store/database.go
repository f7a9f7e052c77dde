package store

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// EnsureDatabase creates the database named in url when it does not exist,
// connecting to the server's "postgres" database to do so.
func EnsureDatabase(ctx context.Context, url string) (created bool, err error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return false, fmt.Errorf("database url: %w", redact(err))
	}
	cfg.RuntimeParams["application_name"] = ApplicationName
	name := cfg.Database
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil {
		return false, conn.Close(ctx)
	}
	if !IsMissingDatabase(err) {
		return false, fmt.Errorf("connect to %s: %w", describe(cfg), err)
	}
	admin := cfg.Copy()
	admin.Database = "postgres"
	conn, err = pgx.ConnectConfig(ctx, admin)
	if err != nil {
		return false, fmt.Errorf("connect to %s to create database %q: %w", describe(admin), name, err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database: created meanwhile
			return false, nil
		}
		return false, fmt.Errorf("create database %q: %w", name, err)
	}
	return true, nil
}

// IsMissingDatabase reports whether err is the server's refusal of a
// connection to a database that does not exist.
func IsMissingDatabase(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "3D000" // invalid_catalog_name
}

// CreateDatabase creates the database name on the server of adminURL (a
// connection to a database that allows CREATE DATABASE, such as
// "postgres") and returns the URL of the new database. It fails when the
// database exists.
func CreateDatabase(ctx context.Context, adminURL, name string) (string, error) {
	return CreateDatabaseFrom(ctx, adminURL, name, "")
}

// CreateDatabaseFrom is CreateDatabase copying the database template (no
// session may be connected to it); "" is the server's default template.
func CreateDatabaseFrom(ctx context.Context, adminURL, name, template string) (string, error) {
	url, err := withDatabase(adminURL, name)
	if err != nil {
		return "", err
	}
	conn, err := connectAdmin(ctx, adminURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	q := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		q += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if _, err := conn.Exec(ctx, q); err != nil {
		return "", fmt.Errorf("create database %q: %w", name, err)
	}
	return url, nil
}

// DropDatabase drops the database name on the server of adminURL, closing
// its connections first (WITH (FORCE)); a database that does not exist is
// not an error.
func DropDatabase(ctx context.Context, adminURL, name string) error {
	conn, err := connectAdmin(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %q: %w", name, err)
	}
	return nil
}

func connectAdmin(ctx context.Context, adminURL string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(adminURL)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", redact(err))
	}
	cfg.RuntimeParams["application_name"] = ApplicationName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", describe(cfg), err)
	}
	return conn, nil
}

// withDatabase returns url with its database (path) replaced by name.
func withDatabase(raw, name string) (string, error) {
	u, err := neturl.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("database url: expected a postgres:// URL")
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}
