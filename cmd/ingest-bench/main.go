// Command ingest-bench generates runs holding every artifact kind, ingests
// them into a fresh database and again, and prints throughput per kind,
// wall time and peak memory (see README, "Bench command").
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/inferencex/ingest/ingest/cli"
	"github.com/inferencex/ingest/ingest/perf"
)

func main() {
	// As the ingest command does: the in-process passes are measured
	// with the command's memory behaviour.
	cli.SetGCTarget(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := perf.Main(ctx, os.Args[1:], perf.Stdio())
	stop()
	os.Exit(code)
}
