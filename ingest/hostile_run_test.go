package ingest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures"

	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// hBase is the tree a case starts from and the load flags it needs.
type hBase int

const (
	// baseBench: two good per-job rows (conc 4, 8), no listing, --run-id 42.
	baseBench hBase = iota
	// baseGen: the small generated run (hGenOptions) with its listing.
	baseGen
	// baseDemo: the bundled demo run.
	baseDemo
	// baseNone: the case's exec does everything.
	baseNone
)

// hCase is one hostile input: the tree, how it is ingested, and what must
// come out.
type hCase struct {
	name  string
	input string // one line for the closing table
	base  hBase
	// mutate turns the base tree into the hostile one.
	mutate func(t *testing.T, dir string)
	// args are extra flags of `ingest load`.
	args []string
	// exec replaces `ingest load` (GitHub, locks, unmigrated databases).
	exec func(t *testing.T, c *hCtx) hResult
	exit int
	// want are substrings of stdout+stderr (the report line or the error,
	// naming artifact, file and reason); absent must not show.
	want   []string
	absent []string
	// aborted: every table but the ledger holds exactly what it held.
	aborted bool
	// check asserts the exact counts of a partial run, or anything else.
	check func(t *testing.T, c *hCtx)
	// slow cases (retry back-off, 200 MB files, a build) start first, so
	// that the quick ones run beside them.
	slow bool
}

// hCtx is one case's database, tree and outcome.
type hCtx struct {
	db      string
	dir     string
	summary string // --summary-json path
	res     hResult
	sum     *schema.Summary
	// state carries what an exec observed to its check.
	state map[string]any
}

// hOutcome is one row of the closing table.
type hOutcome struct {
	name, input string
	want, got   int
	failed      bool
}

func TestHostile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the hostile suite: not under -short")
	}
	cases := hostileCases()
	require.GreaterOrEqual(t, len(cases), 60)
	seen := map[string]bool{}
	for _, c := range cases {
		require.False(t, seen[c.name], "case %q twice", c.name)
		seen[c.name] = true
	}
	// Creating and dropping a database per case costs more than the
	// cases: a few databases (one per parallel case) are emptied and
	// reused instead.
	hBinDir = t.TempDir()
	dbs := make(chan string, max(runtime.GOMAXPROCS(0), 2))
	for range cap(dbs) {
		dbs <- pgtest.New(t)
	}
	var mu sync.Mutex
	outcomes := map[string]hOutcome{}
	start := time.Now()
	t.Cleanup(func() {
		var b strings.Builder
		pass := 0
		b.WriteString("\n| case | input | expected exit | got exit | result |\n|---|---|---|---|---|\n")
		for _, c := range cases {
			o, ok := outcomes[c.name]
			if !ok {
				continue // not selected by -run
			}
			res := "PASS"
			if o.failed {
				res = "FAIL"
			} else {
				pass++
			}
			got := fmt.Sprint(o.got)
			if o.got < 0 {
				got = "–"
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s |\n", o.name, strings.ReplaceAll(o.input, "|", "\\|"), o.want, got, res)
		}
		fmt.Fprintf(&b, "\n%d of %d cases pass (%.1f s); %d plain reruns answered from the ledger, each reporting what a --reread rerun did\n",
			pass, len(outcomes), time.Since(start).Seconds(), hUnchangedAnswered.Load())
		fmt.Fprint(os.Stdout, b.String())
		if len(outcomes) == len(cases) && hUnchangedAnswered.Load() < 20 {
			t.Errorf("only %d plain reruns were answered from the ledger: the comparison with --reread proves little", hUnchangedAnswered.Load())
		}
	})
	order := slices.Clone(cases)
	slices.SortStableFunc(order, func(a, b hCase) int {
		switch {
		case a.slow == b.slow:
			return 0
		case a.slow:
			return -1
		}
		return 1
	})
	for _, c := range order {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := -1
			t.Cleanup(func() {
				mu.Lock()
				outcomes[c.name] = hOutcome{name: c.name, input: c.input, want: c.exit, got: got, failed: t.Failed()}
				mu.Unlock()
			})
			ctx := &hCtx{dir: t.TempDir(), state: map[string]any{}}
			ctx.summary = filepath.Join(t.TempDir(), "summary.json")
			ctx.db = <-dbs
			t.Cleanup(func() { dbs <- ctx.db })
			hReset(t, ctx.db)
			if c.aborted {
				hSeed(t, ctx.db)
			}
			var before map[string]string
			if c.aborted {
				before = hChecksums(t, ctx.db)
			}
			var args []string
			switch c.base {
			case baseBench:
				hBenchTree(t, ctx.dir)
				args = []string{"--run-id", hItoa(hostileRunID)}
			case baseGen:
				hGenTree(t, ctx.dir)
			case baseDemo:
				require.NoError(t, fixtures.WriteDemoRun(ctx.dir))
			}
			if c.mutate != nil {
				c.mutate(t, ctx.dir)
			}
			if c.exec != nil {
				ctx.res = c.exec(t, ctx)
			} else {
				rctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
				defer cancel()
				full := append([]string{"load", ctx.dir, "--database-url", ctx.db, "--summary-json", ctx.summary, "--log-level", "warn"}, args...)
				ctx.res = hCLI(rctx, nil, append(full, c.args...)...)
			}
			got = ctx.res.code
			ctx.sum = hSummary(t, ctx.summary)
			require.Equal(t, c.exit, ctx.res.code, "exit code\n%s", ctx.res)
			out := ctx.res.output()
			for _, w := range c.want {
				require.Contains(t, out, w, "output lacks %q\n%s", w, ctx.res)
			}
			for _, a := range c.absent {
				require.NotContains(t, out, a, "output holds %q\n%s", a, ctx.res)
			}
			if c.aborted {
				require.Equal(t, before, hChecksums(t, ctx.db), "an aborted ingest changed table contents")
			}
			if c.check != nil {
				c.check(t, ctx)
			}
			written := ctx.sum != nil && ctx.sum.Status != schema.StatusAborted && ctx.sum.IngestID != 0
			if c.exec == nil && written && !slices.Contains(c.args, "--dry-run") {
				hRerunMatchesFull(t, ctx, append(args, c.args...))
			}
		})
	}
}
