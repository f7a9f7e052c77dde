package cli

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/ingest/store"
)

// runDemo creates the database if needed, migrates it, and ingests the demo
// run bundled in the binary. A run written with its designed failures is a
// successful demo (exit 0); only an aborted ingest fails it.
func runDemo(ctx context.Context, env Env, args []string) int {
	fs, s := newFlagSet("demo", env)
	opts := addIngest(s)
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: ingest demo [--database-url URL] [--format text|md|json] [--dry-run]")
		fs.PrintDefaults()
	}
	if ok, code := parse(fs, s, args); !ok {
		return code
	}
	if _, err := store.EnsureDatabase(ctx, opts.dbURL.String()); err != nil {
		return fail(env, "%v", err)
	}
	dir, err := os.MkdirTemp("", "ingest-demo-")
	if err != nil {
		return fail(env, "%v", err)
	}
	defer os.RemoveAll(dir)
	if err := copyFS(dir, fixtures.DemoRun()); err != nil {
		return fail(env, "unpack the demo run: %v", err)
	}
	code := ingestTree(ctx, env, opts, dir)
	if code == ExitCompletedWithFailures {
		return ExitOK
	}
	return code
}

// copyFS writes every file of src below dir, keeping modification times
// out of it: the demo tree's order comes from its artifacts.json.
func copyFS(dir string, src fs.FS) error {
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := src.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// databaseName is the last path element of a connection URL, used as the
// report's target name when none is configured.
func databaseName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || strings.Trim(u.Path, "/") == "" {
		return "configured"
	}
	return strings.Trim(u.Path, "/")
}
