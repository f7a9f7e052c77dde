package cli_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/store/pgtest"
)

func TestZZExplore(t *testing.T) {
	url := pgtest.New(t)
	for _, args := range [][]string{
		{"demo", "--database-url", url},
		{"demo", "--database-url", url, "--format", "md"},
		{"report", "--database-url", url, "--run-id", "28485856738", "--format", "text"},
		{"report", "--database-url", url, "--run-id", "1"},
		{"migrate", "version", "--database-url", url},
		{"load", "/nonexistent", "--database-url", url},
		{"load", "--database-url", "postgres://postgres@127.0.0.1:1/x?sslmode=disable", "/tmp"},
	} {
		var o, e bytes.Buffer
		code := cli.Main(context.Background(), args, cli.Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }})
		t.Logf("ARGS %v CODE %d\nSTDOUT:\n%s\nSTDERR:\n%s", args, code, o.String(), e.String())
	}
}
