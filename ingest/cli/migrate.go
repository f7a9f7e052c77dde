package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferencex/ingest/ingest/store"
)

// migrateCommand manages the schema: up applies every pending migration,
// down reverts N (default 1), force N records a version, version prints
// where the database stands.
func (a *app) migrateCommand() *cobra.Command {
	action := func(use, short, long string, maxArgs int) *cobra.Command {
		cmd, s, run := a.command(use, short, long, maxArgs)
		common := addCommon(s)
		var yes *bool
		if cmd.Name() == "down" {
			yes = s.flag("yes", "drop the tables and columns holding rows that the down migrations drop (asked on a terminal)")
		}
		name := cmd.Name()
		run(func(ctx context.Context, args []string) int { return runMigrate(ctx, a.env, common, name, args, yes) })
		return cmd
	}
	return a.group("migrate", "manage the schema: ingest migrate up|down [N]|force N|version",
		action("up", "apply every pending migration", "", 0),
		action("down [N]", "revert the newest N migrations (default 1)",
			"Revert the newest N migrations (default 1). Nothing runs when N is more than the migrations at or below\n"+
				"the database's version. The down migrations are first rehearsed in a transaction that is rolled back: one\n"+
				"that would fail stops everything, and the tables and columns they drop are listed with their rows. Dropping\n"+
				"any that hold rows needs --yes (or a yes typed on a terminal).", 1),
		action("force N", "record version N as the schema's, clean, running nothing",
			"Record version N as the schema's, clean, running nothing: after a migration failed halfway (the schema is\n"+
				"dirty) and what it left was repaired by hand.", 1),
		action("version", "print the schema version and the binary's", "", 0),
	)
}

func runMigrate(ctx context.Context, env Env, common *commonOpts, action string, positional []string, yes *bool) int {
	var force uint64
	if action == "force" {
		var err error
		if len(positional) == 1 {
			force, err = strconv.ParseUint(positional[0], 10, 32)
		}
		if len(positional) == 0 || err != nil || force < 1 {
			fmt.Fprintln(env.Stderr, "ingest migrate force: the version N to record is required (a positive number: the version the schema is really at)")
			return ExitUsage
		}
		positional = nil
	}
	steps := 1
	if len(positional) == 1 {
		n, err := strconv.Atoi(positional[0])
		if err != nil || n < 1 {
			fmt.Fprintf(env.Stderr, "ingest migrate down: %q is not a positive number of steps\n", positional[0])
			return ExitUsage
		}
		steps = n
	}
	st, _, code := connect(ctx, common, env)
	if st == nil {
		return code
	}
	defer st.Close()
	switch action {
	case "up":
		from, to, err := st.MigrateUp(ctx)
		if err != nil {
			return fail(env, "%v", err)
		}
		fmt.Fprintf(env.Stdout, "schema at version %d (was %d)\n", to, from)
	case "down":
		return migrateDown(ctx, env, st, steps, *yes)
	case "force":
		before, err := st.SchemaVersion(ctx)
		if err != nil {
			return fail(env, "%v", err)
		}
		if err := st.MigrateForce(ctx, uint(force)); err != nil {
			return fail(env, "%v", err)
		}
		was := fmt.Sprint(before.Version)
		if before.Dirty {
			was += ", dirty"
		}
		fmt.Fprintf(env.Stdout, "schema version recorded as %d, clean (was %s); no migration was run\n", force, was)
	case "version":
		v, err := st.SchemaVersion(ctx)
		if err != nil {
			return fail(env, "%v", err)
		}
		dirty := ""
		if v.Dirty {
			dirty = " (dirty: a migration failed halfway; repair what it left, then run \"ingest migrate force N\" with the version the schema is really at)"
		}
		if v.Version > v.Latest {
			dirty += " (newer than this binary: it refuses to write to this database)"
		}
		fmt.Fprintf(env.Stdout, "schema version %d, binary carries %d%s\n", v.Version, v.Latest, dirty)
	}
	return ExitOK
}

// migrateDown reverts steps migrations. What they would drop is worked out
// first (store.Store.PlanDown) and said; dropping data needs yes, or a yes
// typed on a terminal. The exit code says what happened: ExitUsage or
// ExitAborted when nothing ran (refused, or the rehearsal failed),
// ExitCompletedWithFailures when some versions were reverted before one
// failed, ExitOK when all were.
func migrateDown(ctx context.Context, env Env, st *store.Store, steps int, yes bool) int {
	plan, err := st.PlanDown(ctx, steps)
	if errors.Is(err, store.ErrDownTooFar) {
		fmt.Fprintln(env.Stderr, err)
		return ExitUsage
	}
	if err != nil {
		return fail(env, "%v", err)
	}
	drops := describeDrops(plan)
	if plan.LosesRows() && !yes {
		if !isTerminal(env.Stdin) {
			fmt.Fprintf(env.Stderr, "ingest migrate down %d would revert %s and drop %s.\n"+
				"Pass --yes to drop them; nothing was run.\n", steps, plan.Reverts(), drops)
			return ExitUsage
		}
		fmt.Fprintf(env.Stderr, "ingest migrate down %d reverts %s and drops %s.\nType yes to drop them: ", steps, plan.Reverts(), drops)
		answer, _ := bufio.NewReader(env.Stdin).ReadString('\n')
		if strings.TrimSpace(answer) != "yes" {
			fmt.Fprintln(env.Stderr, "not confirmed; nothing was run")
			return ExitAborted
		}
	}
	if len(plan.Drops) > 0 {
		fmt.Fprintf(env.Stdout, "dropping %s\n", drops)
	}
	if err := st.MigrateDown(ctx, steps); err != nil {
		var down *store.DownError
		if errors.As(err, &down) && len(down.Reverted) > 0 {
			fail(env, "%v; the schema is dirty: check what the failed migration left, then run \"ingest migrate force N\" "+
				"with the version it is really at", err)
			return ExitCompletedWithFailures
		}
		return fail(env, "%v; nothing was reverted", err)
	}
	fmt.Fprintf(env.Stdout, "reverted %d migration(s): %s (now at version %d)\n", len(plan.Versions), plan.Reverts(), plan.To)
	return ExitOK
}

// describeDrops names what a down plan drops: what holds rows with their
// counts, then the empty tables and columns by name.
func describeDrops(plan store.DownPlan) string {
	var full, empty []string
	for _, d := range plan.Drops {
		switch {
		case d.Rows > 0:
			full = append(full, d.String())
		case d.Column != "":
			empty = append(empty, d.Table+"."+d.Column)
		default:
			empty = append(empty, d.Table)
		}
	}
	switch {
	case len(full) == 0 && len(empty) == 0:
		return "no table or column"
	case len(empty) == 0:
		return strings.Join(full, ", ")
	}
	return strings.Join(append(full, fmt.Sprintf("%d empty (%s)", len(empty), strings.Join(empty, ", "))), ", ")
}
