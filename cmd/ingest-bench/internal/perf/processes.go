package perf

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/schema"
)

// ProcessConfig says what the process bench generates and how often it
// runs `ingest load` on it.
type ProcessConfig struct {
	// Gen is the one run tree to generate.
	Gen generate.Options
	// Repeat is how many fresh databases the tree is loaded into (≥ 1);
	// each gets a first ingest and a rerun.
	Repeat int
	// Bin is the ingest binary; empty builds ./cmd/ingest with `go build`.
	Bin string
	// Baseline, when set, is another ingest binary measured side by side
	// with Bin: each repeat loads the tree with both, in alternating order,
	// so that a machine whose speed drifts affects both alike.
	Baseline string
	// Floor also measures the database floor of every first ingest of
	// Bin (floor.go).
	Floor    bool
	AdminURL string
	// DatabasePrefix is as Config's.
	DatabasePrefix string
	Keep           bool
	Dir            string
	Log            *zap.Logger
}

// ProcessResult is what the process bench measured: every first ingest and
// every rerun, each a whole `ingest load` process.
type ProcessResult struct {
	Config    ProcessConfig
	Designed  generate.Manifest
	Artifacts int
	TreeBytes int64
	// ProcessRuns are the runs of the binary measured (Config.Bin).
	ProcessRuns
	// Baseline holds the same runs of the baseline binary, when one was
	// given.
	Baseline *ProcessRuns
	// Floors are the database floors measured (Config.Floor), one per
	// repeat.
	Floors   []Floor
	Problems []string
}

// ProcessRuns are one binary's first ingests, reruns (answered from the
// ledger) and --reread reruns (read and compared in full).
type ProcessRuns struct {
	First, Rerun, Reread []ProcessRun
}

func (r *ProcessRuns) add(runs [3]ProcessRun) {
	r.First, r.Rerun, r.Reread = append(r.First, runs[0]), append(r.Rerun, runs[1]), append(r.Reread, runs[2])
}

// ProcessRun is one `ingest load` process: its wall time (start to exit),
// peak RSS (the kernel's ru_maxrss of the child) and the stage times it
// logged ("stage finished").
type ProcessRun struct {
	Wall   time.Duration
	MaxRSS int64
	Stages map[string]time.Duration
	// ParentRSS is this bench process's resident set when it started the
	// load (0 where unknown). Linux folds it into the child's ru_maxrss
	// (the child shares the parent's memory until it execs), so a MaxRSS
	// not above it measured the bench, not the ingest (RSSMeasured).
	ParentRSS int64
}

// RSSMeasured says whether MaxRSS is the ingest's own peak, clearly above
// what it took over from the bench process (whose resident set may grow a
// little between the reading and the start of the load: rssMargin). Where
// the bench's own resident set is unknown (ParentRSS 0), so is this.
func (r ProcessRun) RSSMeasured() bool { return r.ParentRSS > 0 && r.MaxRSS > r.ParentRSS+rssMargin }

// rssMargin is how far a load's peak RSS must be above the bench process's
// resident set to count as the load's own.
const rssMargin = 2 << 20

// RunProcesses generates the tree once, then Repeat times: creates and
// migrates a database (not timed), runs `ingest load` on the tree (first),
// again (rerun: answered from the ledger, the inputs being unchanged) and
// again with --reread (read in full), checks the reports against the
// tree's manifest and drops the database.
func RunProcesses(ctx context.Context, cfg ProcessConfig) (*ProcessResult, error) {
	if cfg.Repeat < 1 {
		return nil, fmt.Errorf("repeat must be at least 1, got %d", cfg.Repeat)
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.AdminURL == "" {
		cfg.AdminURL = DefaultAdminURL
	}
	res := &ProcessResult{Config: cfg}
	if cfg.Baseline != "" {
		if info, err := os.Stat(cfg.Baseline); err != nil || info.IsDir() {
			return nil, fmt.Errorf("baseline %q is not an ingest binary", cfg.Baseline)
		}
	}
	dir, err := os.MkdirTemp(cfg.Dir, "ingest-bench-")
	if err != nil {
		return nil, fmt.Errorf("trees directory: %w", err)
	}
	if !cfg.Keep {
		defer os.RemoveAll(dir)
	}
	if cfg.Bin == "" {
		cfg.Bin = filepath.Join(dir, "ingest")
		out, err := exec.CommandContext(ctx, "go", "build", "-o", cfg.Bin, "github.com/inferencex/ingest/cmd/ingest").CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("build the ingest binary (or pass -ingest): %w: %s", err, out)
		}
	}
	tree := filepath.Join(dir, "run")
	if res.Designed, err = generate.Write(tree, cfg.Gen); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	res.Artifacts = res.Designed.Artifacts
	if res.TreeBytes, err = treeBytes(tree); err != nil {
		return nil, err
	}
	if cfg.Baseline != "" {
		res.Baseline = &ProcessRuns{}
	}
	for i := range cfg.Repeat {
		type side struct {
			bin, label string
			runs       *ProcessRuns
			floor      bool
		}
		sides := []side{{cfg.Bin, "", &res.ProcessRuns, cfg.Floor}}
		if res.Baseline != nil {
			base := side{cfg.Baseline, "baseline, ", res.Baseline, false}
			if i%2 == 0 {
				sides = []side{base, sides[0]}
			} else {
				sides = append(sides, base)
			}
		}
		for _, sd := range sides {
			c := cfg
			c.Bin = sd.bin
			c.Floor = sd.floor
			runs, floor, problems, err := loadThrice(ctx, c, tree, res.Designed, i)
			if err != nil {
				return nil, fmt.Errorf("%s%w", sd.label, err)
			}
			sd.runs.add(runs)
			if floor != nil {
				res.Floors = append(res.Floors, *floor)
			}
			for _, p := range problems {
				res.Problems = append(res.Problems, sd.label+p)
			}
		}
	}
	return res, nil
}

// loadThrice loads the tree into a fresh database, then again, then again
// with --reread; with cfg.Floor, it then measures the database floor of
// what the first load wrote.
func loadThrice(ctx context.Context, cfg ProcessConfig, tree string, m generate.Manifest, i int) (runs [3]ProcessRun, floor *Floor, problems []string, err error) {
	database := databaseName(cfg.DatabasePrefix, "") + randomSuffix()
	url, err := createDatabase(ctx, cfg.AdminURL, database, "")
	if err != nil {
		return runs, nil, nil, err
	}
	defer func() {
		if cfg.Keep {
			return
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := dropDatabase(dctx, cfg.AdminURL, database); err != nil {
			cfg.Log.Warn("could not drop the bench database", zap.String("database", database), zap.Error(err))
		}
	}()
	if out, err := exec.CommandContext(ctx, cfg.Bin, "migrate", "up", "--database-url", url).CombinedOutput(); err != nil {
		return runs, nil, nil, fmt.Errorf("migrate %s: %w: %s", database, err, out)
	}
	for k, name := range []string{"first", "rerun", "reread"} {
		var extra []string
		if name == "reread" {
			extra = []string{"--reread"}
		}
		run, sum, err := loadProcess(ctx, cfg.Bin, tree, url, extra...)
		if err != nil {
			return runs, nil, nil, err
		}
		runs[k] = run
		for _, c := range check(sum, m, k > 0) {
			problems = append(problems, fmt.Sprintf("repeat %d, %s: %s", i+1, name, c))
		}
		switch answered := sum.Details.UnchangedSince != 0; {
		case name == "rerun" && !answered:
			problems = append(problems, fmt.Sprintf("repeat %d, rerun: not answered from the ledger (its inputs are unchanged)", i+1))
		case name != "rerun" && answered:
			problems = append(problems, fmt.Sprintf("repeat %d, %s: answered from the ledger", i+1, name))
		}
	}
	// After the reruns (which wrote no data), so that it does not warm the
	// caches they read.
	if cfg.Floor {
		f, err := measureFloor(ctx, cfg, url)
		if err != nil {
			return runs, nil, nil, err
		}
		floor = &f
	}
	return runs, floor, problems, nil
}

// loadProcess runs `ingest load TREE` and measures it.
func loadProcess(ctx context.Context, bin, tree, url string, extra ...string) (ProcessRun, *schema.Summary, error) {
	run := ProcessRun{Stages: map[string]time.Duration{}}
	args := append([]string{"load", tree, "--database-url", url, "--no-migrate",
		"--format", "json", "--log-format", "json", "--log-level", "info"}, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	run.ParentRSS = leanParent()
	started := time.Now()
	err := cmd.Run()
	run.Wall = time.Since(started)
	if err != nil {
		return run, nil, fmt.Errorf("ingest load: %w: %s", err, lastLines(stderr.Bytes(), 5))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		run.MaxRSS = ru.Maxrss * 1024 // kilobytes on Linux
	}
	sc := bufio.NewScanner(&stderr)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var line struct {
			Msg   string  `json:"msg"`
			Stage string  `json:"stage"`
			Took  float64 `json:"took"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == stageFinished {
			run.Stages[line.Stage] += time.Duration(line.Took * float64(time.Second))
		}
	}
	var sum schema.Summary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		return run, nil, fmt.Errorf("ingest load: read its JSON report: %w", err)
	}
	return run, &sum, nil
}

// leanParent returns the memory this process no longer needs to the
// system and resets its RSS high-water mark, so that the next child's
// ru_maxrss counts as little of this process as can be; it returns the
// resident set it is left with (0 where unknown: not Linux).
func leanParent() int64 {
	if !resetPeakRSS() {
		return 0
	}
	hwm, _ := readVmHWM()
	return hwm
}

func lastLines(b []byte, n int) string {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// median of durations (the lower middle one of an even count).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}
