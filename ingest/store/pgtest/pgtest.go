// Package pgtest gives tests fresh, migrated PostgreSQL databases on the
// real server, each created from a migrated template and dropped when the
// test ends.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/migrations"
)

// AdminURLEnv names the variable that points tests at a server; its
// database must allow CREATE DATABASE.
const AdminURLEnv = "INGEST_TEST_DATABASE_URL"

const defaultAdminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// AdminURL is the maintenance connection tests create databases through.
func AdminURL() string {
	if v := os.Getenv(AdminURLEnv); v != "" {
		return v
	}
	return defaultAdminURL
}

// New creates a fresh database holding the current schema and returns its
// URL. The database is dropped when the test ends.
func New(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		t.Fatalf("pgtest: connect to %s (start PostgreSQL or set %s): %v", AdminURL(), AdminURLEnv, err)
	}
	defer admin.Close(ctx)
	tmpl, err := ensureTemplate(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	name := "ingest_test_" + randomSuffix()
	if _, err := admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, tmpl)); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, AdminURL())
		if err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
		}
	})
	return withDatabase(AdminURL(), name)
}

// ensureTemplate builds, once per migration set, a template database with
// every migration applied. Concurrent test processes serialise on an
// advisory lock.
func ensureTemplate(ctx context.Context, admin *pgx.Conn) (string, error) {
	digest, err := migrationsDigest()
	if err != nil {
		return "", err
	}
	name := "ingest_tmpl_" + digest[:16]
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock(hashtextextended('ingest-pgtest-template', 0))"); err != nil {
		return "", fmt.Errorf("lock template: %w", err)
	}
	defer admin.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtextextended('ingest-pgtest-template', 0))")
	var ready bool
	err = admin.QueryRow(ctx, "SELECT coalesce((SELECT datistemplate FROM pg_database WHERE datname = $1), false)", name).Scan(&ready)
	if err != nil {
		return "", fmt.Errorf("look up template: %w", err)
	}
	if ready {
		return name, nil
	}
	if err := dropStaleTemplates(ctx, admin, name); err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return "", fmt.Errorf("drop stale template: %w", err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create template: %w", err)
	}
	st, err := store.Open(ctx, withDatabase(AdminURL(), name), zap.NewNop())
	if err != nil {
		return "", err
	}
	_, _, err = st.MigrateUp(ctx)
	st.Close()
	if err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+name+" WITH IS_TEMPLATE true"); err != nil {
		return "", fmt.Errorf("mark template: %w", err)
	}
	return name, nil
}

// dropStaleTemplates removes templates built from older migration sets.
func dropStaleTemplates(ctx context.Context, admin *pgx.Conn, keep string) error {
	rows, err := admin.Query(ctx, "SELECT datname FROM pg_database WHERE datname LIKE 'ingest\\_tmpl\\_%' AND datname <> $1", keep)
	if err != nil {
		return fmt.Errorf("list stale templates: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("list stale templates: %w", err)
	}
	for _, n := range names {
		id := pgx.Identifier{n}.Sanitize()
		if _, err := admin.Exec(ctx, "ALTER DATABASE "+id+" WITH IS_TEMPLATE false"); err != nil {
			return fmt.Errorf("unmark stale template %s: %w", n, err)
		}
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+id+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop stale template %s: %w", n, err)
		}
	}
	return nil
}

func migrationsDigest() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash migrations: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func withDatabase(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Path = "/" + name
	return u.String()
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
