// Command ingest loads InferenceX benchmark runs into PostgreSQL.
package main

import (
	"context"
	"os"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/gctarget"
)

// version is the release version, stamped by the release build
// (.goreleaser.yaml, Dockerfile: -ldflags "-X main.version=v1.2.3"); a
// plain build leaves it empty and the module's build information names the
// version instead.
var version string

func main() {
	gc := gctarget.Apply(os.Getenv)
	ctx, stop := cli.SignalContext(context.Background())
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, GC: gc, Version: version})
	stop()
	os.Exit(code)
}
