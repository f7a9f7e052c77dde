package cli

import (
	"context"
	"fmt"
	"strconv"
)

// runMigrate manages the schema: up applies every pending migration, down
// reverts N (default 1), version prints where the database stands.
func runMigrate(ctx context.Context, env Env, args []string) int {
	fs, s := newFlagSet("migrate", env)
	common := addCommon(s)
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: ingest migrate up|down [N]|version [--database-url URL]")
		fs.PrintDefaults()
	}
	if len(args) == 0 {
		fs.Usage()
		return ExitUsage
	}
	action, rest := args[0], args[1:]
	switch action {
	case "up", "down", "version":
	default:
		fmt.Fprintf(env.Stderr, "ingest migrate: unknown action %q (up, down, version)\n", action)
		return ExitUsage
	}
	maxArgs := 0
	if action == "down" {
		maxArgs = 1
	}
	positional, ok, code := parse(fs, s, rest, maxArgs)
	if !ok {
		return code
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
	case "version":
		v, err := st.MigrationVersion(ctx)
		if err != nil {
			return fail(env, "%v", err)
		}
		dirty := ""
		if v.Dirty {
			dirty = " (dirty: a migration failed halfway; fix it, then force the version)"
		}
		fmt.Fprintf(env.Stdout, "schema version %d, binary carries %d%s\n", v.Version, v.Latest, dirty)
	}
	return ExitOK
}
