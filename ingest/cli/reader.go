package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// readerCommand manages the dashboard's reader role: `ingest reader create
// ROLE` makes ROLE a login that reads every table and view the dashboard
// reads, with search_path preset to "dashboard, public", and changes
// nothing. Running it again brings the role back in line (new tables of
// later migrations included); --dry-run prints the statements only.
func (a *app) readerCommand() *cobra.Command {
	cmd, s, run := a.command("create ROLE", "create the reader role, or bring it in line",
		"Make ROLE a login that reads every table and view the dashboard reads (search_path \"dashboard, public\") and\n"+
			"changes nothing. Run it again after migrating to bring the role in line.", 1)
	common := addCommon(s)
	dryRun := s.flag("dry-run", "print the statements, change nothing", "INGEST_DRY_RUN")
	run(func(ctx context.Context, args []string) int {
		if len(args) != 1 {
			fmt.Fprintln(a.env.Stderr, "ingest reader create: name the role")
			return ExitUsage
		}
		return runReader(ctx, a.env, common, *dryRun, args[0])
	})
	return a.group("reader", "the dashboard's read-only role: ingest reader create ROLE [--dry-run]", cmd)
}

func runReader(ctx context.Context, env Env, common *commonOpts, dryRun bool, role string) int {
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
	if dryRun {
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
