package cli

import (
	"context"
	"fmt"
)

// runReader manages the dashboard's reader role: `ingest reader create
// ROLE` makes ROLE a login that reads every table and view the dashboard
// reads, with search_path preset to "dashboard, public", and changes
// nothing. Running it again brings the role back in line (new tables of
// later migrations included); --dry-run prints the statements only.
func runReader(ctx context.Context, env Env, args []string) int {
	fs, s := newFlagSet("reader", env)
	common := addCommon(s)
	dryRun := s.flag("dry-run", "print the statements, change nothing", "INGEST_DRY_RUN")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: ingest reader create ROLE [--dry-run] [--database-url URL]")
		fs.PrintDefaults()
	}
	role, ok, code := parseAction(fs, s, env, args, "create", "name the role")
	if !ok {
		return code
	}
	st, _, code := connect(ctx, common, env) // the grants cover the schema as it is: no migration here
	if st == nil {
		return code
	}
	defer st.Close()
	p, err := st.PlanReader(ctx, role)
	if err != nil {
		return fail(env, "%v", err)
	}
	verb := "brought in line"
	if !p.Exists {
		verb = "created"
	}
	if *dryRun {
		fmt.Fprintf(env.Stdout, "dry run: reader role %s would be %s in database %s with:\n", p.Role, verb, p.Database)
	} else {
		if err := st.ApplyReader(ctx, p); err != nil {
			return fail(env, "%v", err)
		}
		fmt.Fprintf(env.Stdout, "reader role %s %s in database %s:\n", p.Role, verb, p.Database)
	}
	for _, q := range p.Statements {
		fmt.Fprintf(env.Stdout, "  %s;\n", q)
	}
	fmt.Fprintln(env.Stdout, "It reads every table and view of schemas dashboard and public and can change none; "+
		"set its password with ALTER ROLE, and run this again after migrating if the migrations run as another role.")
	return ExitOK
}
