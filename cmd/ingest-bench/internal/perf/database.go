package perf

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"

	"github.com/jackc/pgx/v5"
)

// qFastToast is the statement a run's transaction begins with (the store's
// qFastToast): long values compressed with lz4 where the server has it. The
// database floor copies its rows with it, so the floor pays what an ingest
// pays.
const qFastToast = `
SELECT set_config('default_toast_compression', 'lz4', true)
FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)`

// createDatabase creates the database name on the server of adminURL (a
// connection to a database that allows CREATE DATABASE, such as
// "postgres"), copying template ("" is the server's default; no session may
// be connected to it), and returns the URL of the new database. It fails
// when the database exists.
func createDatabase(ctx context.Context, adminURL, name, template string) (string, error) {
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

// dropDatabase drops the database name on the server of adminURL, closing
// its connections first (WITH (FORCE)); a database that does not exist is
// not an error.
func dropDatabase(ctx context.Context, adminURL, name string) error {
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
		return nil, errors.New("database url: cannot parse the connection string (check its syntax)")
	}
	cfg.RuntimeParams["application_name"] = "ingest-bench"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres://%s@%s:%d/%s: %w", cfg.User, cfg.Host, cfg.Port, cfg.Database, err)
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
