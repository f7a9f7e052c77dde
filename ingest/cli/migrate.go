package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
)

// migrateCommand manages the schema: up applies every pending migration,
// down reverts N (default 1), force N records a version, version prints
// where the database stands.
func (a *app) migrateCommand() *cobra.Command {
	action := func(use, short, long string, maxArgs int) *cobra.Command {
		cmd, s, run := a.command(use, short, long, maxArgs)
		common := addCommon(s)
		name := cmd.Name()
		run(func(ctx context.Context, args []string) int { return runMigrate(ctx, a.env, common, name, args) })
		return cmd
	}
	return a.group("migrate", "manage the schema: ingest migrate up|down [N]|force N|version",
		action("up", "apply every pending migration", "", 0),
		action("down [N]", "revert the newest N migrations (default 1)", "", 1),
		action("force N", "record version N as the schema's, clean, running nothing",
			"Record version N as the schema's, clean, running nothing: after a migration failed halfway (the schema is\n"+
				"dirty) and what it left was repaired by hand.", 1),
		action("version", "print the schema version and the binary's", "", 0),
	)
}

func runMigrate(ctx context.Context, env Env, common *commonOpts, action string, positional []string) int {
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
		if err := st.MigrateDown(ctx, steps); err != nil {
			return fail(env, "%v", err)
		}
		fmt.Fprintf(env.Stdout, "reverted %d migration(s)\n", steps)
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
		v, err := st.MigrationVersion(ctx)
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
