// Command ingest loads InferenceX benchmark runs into PostgreSQL.
package main

import (
	"context"
	"os"

	"github.com/inferencex/ingest/ingest/cli"
)

func main() {
	cli.SetGCTarget(os.Getenv)
	ctx, stop := cli.SignalContext(context.Background())
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv})
	stop()
	os.Exit(code)
}
