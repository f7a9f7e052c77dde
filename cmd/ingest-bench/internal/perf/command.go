package perf

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest/gctarget"
)

// Exit codes of the bench command.
const (
	ExitOK     = 0
	ExitFailed = 1 // the bench could not run, or a check failed
	ExitUsage  = 2
)

// Env is the process environment the command runs in.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// GC is the garbage-collection target the command set (nil: none),
	// handed to the in-process ingests as `ingest load` hands it to its.
	GC *gctarget.Target
}

// Main runs the bench command line (without the program name) and returns
// the exit code. The database URL comes from -database-url, else
// DATABASE_URL, else DefaultAdminURL.
func Main(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	fs := flag.NewFlagSet("ingest-bench", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	// In a flag's usage text a backquoted word names the flag's value in
	// -h ("-processes N"), so commands are written there without quotes.
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: ingest-bench [-runs N] [-points P] [-evals E] [-eval-docs D] [-agentx A] [-telemetry] [-zip] [-format text|md] [options]")
		fmt.Fprintln(env.Stderr, "Generates N runs holding every artifact kind, ingests them into a fresh database, then again,")
		fmt.Fprintln(env.Stderr, "and prints throughput per kind, wall time and peak memory of both passes.")
		fs.PrintDefaults()
	}
	var (
		cfg      Config
		format   string
		logLevel string
		dbURL    string
		repeat   int
		bin      string
		baseline string
		floor    bool
		history  string
		hrepeat  int
		profile  string
	)
	g := &cfg.Gen
	fs.IntVar(&cfg.Runs, "runs", 1, "number of generated runs (distinct run ids and seeds)")
	fs.IntVar(&g.Points, "points", 1000, "benchmark points per run")
	fs.Int64Var(&g.Seed, "seed", 1, "seed of the first run (run i uses seed+i)")
	fs.IntVar(&g.Retries, "retries", 0, "single-node points per run that also get a stale older attempt")
	fs.IntVar(&g.Evals, "evals", 0, "gsm8k evals per run, with samples (and a changelog entry)")
	fs.IntVar(&g.EvalDocs, "eval-docs", 0, "documents per samples file (default 1319; two lines each)")
	fs.IntVar(&g.AgentX, "agentx", 0, "AgentX points per run with raw traces and server logs")
	fs.Int64Var(&g.AgentXProfileBytes, "agentx-profile-bytes", 0, "grow each AgentX profile_export.jsonl to about this size (default: 30 requests per user)")
	fs.BoolVar(&g.Telemetry, "telemetry", false, "GPU metrics per fixed-seq point (one in four uploaded as a power audit with its validation JSON) and DCGM power audits per multinode job")
	fs.BoolVar(&g.Zip, "zip", false, "per-job and telemetry artifacts as .zip files, as ingest run caches them")
	fs.StringVar(&dbURL, "database-url", "", "a database of the server that may CREATE DATABASE (env DATABASE_URL; default "+DefaultAdminURL+")")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the bench database and the generated trees")
	fs.StringVar(&cfg.Dir, "dir", "", "where to generate the trees (default: the temporary directory)")
	fs.StringVar(&format, "format", "text", "output: text or md (Markdown tables)")
	fs.StringVar(&logLevel, "log-level", "warn", "level of the ingest's log lines on stderr")
	fs.IntVar(&repeat, "processes", 0, "instead: generate one run and, `N` times, ingest load it into a fresh database and again, as separate processes; print the median wall time, peak RSS and stage times")
	fs.StringVar(&bin, "ingest", "", "with -processes: the ingest binary (default: go build ./cmd/ingest)")
	fs.StringVar(&baseline, "baseline", "", "with -processes: another ingest binary, measured side by side (alternated in every repeat) and compared")
	fs.BoolVar(&floor, "floor", false, "with -processes: also measure the database floor: the rows each first ingest wrote, copied into a fresh database in one transaction (COPY, every index and trigger in place), and latest_benchmarks refreshed")
	fs.StringVar(&history, "history", "", "instead: for each number of stored runs (e.g. 0,200), fill a database with that many earlier runs of the same points, then measure a first ingest, its update of latest_benchmarks and the dashboard's main and history reads")
	fs.IntVar(&hrepeat, "repeat", 3, "with -history: measurements per level (the levels take turns)")
	fs.StringVar(&profile, "cpuprofile", "", "write a CPU profile of the in-process passes to `file` (go tool pprof)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	usage := func(msg string) int {
		fmt.Fprintln(env.Stderr, "ingest-bench:", msg)
		return ExitUsage
	}
	switch {
	case fs.NArg() > 0:
		return usage(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	case repeat < 0:
		return usage("-processes must not be negative")
	case repeat > 0 && cfg.Runs != 1:
		return usage("-processes loads one run: -runs must be 1")
	case baseline != "" && repeat == 0:
		return usage("-baseline compares `ingest load` processes: it needs -processes")
	case floor && repeat == 0:
		return usage("-floor measures what `ingest load` processes wrote: it needs -processes")
	case profile != "" && (repeat > 0 || history != ""):
		return usage("-cpuprofile profiles the in-process passes: not with -processes or -history")
	case history != "" && (repeat > 0 || cfg.Runs != 1):
		return usage("-history measures one run at each level: no -processes, -runs must be 1")
	case hrepeat < 1:
		return usage("-repeat must be at least 1")
	case cfg.Runs < 1:
		return usage("-runs must be at least 1")
	case g.Points < 1:
		return usage("-points must be at least 1")
	case g.Retries < 0 || g.Evals < 0 || g.EvalDocs < 0 || g.AgentX < 0 || g.AgentXProfileBytes < 0:
		return usage("counts must not be negative")
	case !slices.Contains(Formats(), format):
		return usage(fmt.Sprintf("-format %q is not one of %v", format, Formats()))
	}
	var level zapcore.Level
	if err := level.Set(logLevel); err != nil {
		return usage("-log-level: " + err.Error())
	}
	cfg.AdminURL = firstOf(dbURL, env.Getenv("DATABASE_URL"), DefaultAdminURL)
	cfg.GC = env.GC
	cfg.Log = zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), zapcore.AddSync(env.Stderr), level))
	defer cfg.Log.Sync()
	g.PowerAudits = g.Telemetry
	if g.Evals > 0 && g.EvalDocs == 0 {
		g.EvalDocs = generate.GSM8KDocs
	}

	if history != "" {
		levels, err := parseLevels(history)
		if err != nil {
			return usage("-history: " + err.Error())
		}
		return runHistory(ctx, HistoryConfig{Gen: cfg.Gen, Levels: levels, Repeat: hrepeat, AdminURL: cfg.AdminURL,
			Keep: cfg.Keep, Dir: cfg.Dir, Log: cfg.Log, GC: cfg.GC}, format, env)
	}
	if repeat > 0 {
		return runProcesses(ctx, ProcessConfig{Gen: cfg.Gen, Repeat: repeat, Bin: bin, Baseline: baseline, Floor: floor,
			AdminURL: cfg.AdminURL, Keep: cfg.Keep, Dir: cfg.Dir, Log: cfg.Log}, format, env)
	}
	if profile != "" {
		stop, err := startCPUProfile(profile)
		if err != nil {
			fmt.Fprintln(env.Stderr, "ingest-bench: -cpuprofile:", err)
			return ExitFailed
		}
		defer stop()
	}
	res, err := Run(ctx, cfg)
	return finish(env, err, func() ([]string, error) { return res.Problems, Render(env.Stdout, res, format) })
}

func runProcesses(ctx context.Context, cfg ProcessConfig, format string, env Env) int {
	res, err := RunProcesses(ctx, cfg)
	return finish(env, err, func() ([]string, error) { return res.Problems, RenderProcesses(env.Stdout, res, format) })
}

func runHistory(ctx context.Context, cfg HistoryConfig, format string, env Env) int {
	res, err := RunHistory(ctx, cfg)
	return finish(env, err, func() ([]string, error) { return res.Problems, RenderHistory(env.Stdout, res, format) })
}

// finish renders a bench's result when the bench ran (err nil) and says
// how the command ends: failed on an error or on any failed check.
func finish(env Env, err error, render func() (problems []string, err error)) int {
	var problems []string
	if err == nil {
		problems, err = render()
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, "ingest-bench:", err)
		return ExitFailed
	}
	if len(problems) > 0 {
		return ExitFailed
	}
	return ExitOK
}

// parseLevels reads -history: stored-run counts, comma-separated,
// increasing.
func parseLevels(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a number of runs", f)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, fmt.Errorf("levels must increase: %s", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// startCPUProfile writes a CPU profile to path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// Stdio is the process's own environment, for main.
func Stdio() Env { return Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv} }
