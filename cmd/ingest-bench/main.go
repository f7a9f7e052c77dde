// Command ingest-bench generates runs holding every artifact kind, ingests
// them into a fresh database and again, and prints throughput per kind,
// wall time and peak memory (see docs/performance.md, "The bench command").
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/inferencex/ingest/cmd/ingest-bench/internal/perf"
	"github.com/inferencex/ingest/ingest/gctarget"
)

func main() {
	// As the ingest command does: the in-process passes are measured
	// with the command's memory behaviour.
	env := perf.Stdio()
	env.GC = gctarget.Apply(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := perf.Main(ctx, os.Args[1:], env)
	stop()
	os.Exit(code)
}
