// Command ingest loads InferenceX benchmark runs into PostgreSQL.
package main

import (
	"context"
	"os"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/gctarget"
)

func main() {
	gc := gctarget.Apply(os.Getenv)
	ctx, stop := cli.SignalContext(context.Background())
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, GC: gc})
	stop()
	os.Exit(code)
}
