// Package cli is the command tree of the ingest binary. It parses flags and
// environment, wires the stages together and maps outcomes to exit codes.
//
// The tree is cobra's, its flags pflag's (as the GitHub CLI's): help,
// `ingest help CMD`, --version, typed flags, did-you-mean and shell
// completion come from there; each command declares its options once
// (settings: flag, environment variables, default, check) and only the
// options it uses.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/inferencex/ingest/ingest/gctarget"
	"github.com/inferencex/ingest/ingest/github"
)

// Env is the process environment a command runs in; tests inject their own.
type Env struct {
	// Stdin is read only to confirm a destructive action when it is a
	// terminal (nil: never a terminal, nothing confirmed).
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// GC is the garbage-collection target the command set (nil: none);
	// the telemetry stage raises it while it runs (Deps.LargeHeap).
	GC *gctarget.Target
	// Version is the release version stamped into the binary at link time
	// (cmd/ingest's version, set by the release build); empty: the module
	// version from the build information.
	Version string
	// Retry is how GitHub requests are tried again (zero fields: the
	// client's defaults, as cmd/ingest runs); tests that make GitHub fail
	// shorten its backoff here.
	Retry github.RetryPolicy
}

// app is one command line being run: the environment and the exit code
// the command settled on.
type app struct {
	env  Env
	code int
}

// footer ends every help text.
const footer = `
Options come from flags, then the environment, then defaults (flag > environment > default).
Exit codes: 0 success, 1 aborted (nothing written), 2 usage, 3 written with failures,
4 refused by the coverage guard.
`

// Main runs one command line and returns the process exit code.
func Main(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if isTerminal(env.Stderr) {
		env.Stderr = &liveStderr{w: env.Stderr}
	}
	a := &app{env: env}
	root := a.tree()
	args = a.singleDash(root, args)
	// A first word that names no command is that, whatever flags follow.
	if cmd, _, _ := root.Find(args); cmd == root && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		a.usageError(root, &unknownCommandError{name: args[0]})
		return ExitUsage
	}
	root.SetArgs(append([]string{}, args...)) // never nil: cobra would read os.Args
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil {
		a.usageError(cmd, err)
		return ExitUsage
	}
	return a.code
}

// tree builds the command tree.
func (a *app) tree() *cobra.Command {
	root := &cobra.Command{
		Use:   "ingest",
		Short: "load InferenceX benchmark runs into PostgreSQL",
		Long:  "ingest loads InferenceX benchmark runs into PostgreSQL and reports what landed.",
		// No Version: --version is declared below, to print what `ingest
		// version` prints.
		SilenceErrors:      true,
		SilenceUsage:       true,
		DisableSuggestions: true, // usageError suggests, for flags too
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &unknownCommandError{name: args[0]}
			}
			return nil
		},
	}
	version := root.Flags().BoolP("version", "v", false, "print the version (as ingest version does)")
	root.Run = func(cmd *cobra.Command, _ []string) {
		if *version {
			a.printVersion()
			return
		}
		// Bare `ingest`: the help, on stderr, as a usage error.
		cmd.SetOut(a.env.Stderr)
		cmd.Help()
		a.code = ExitUsage
	}
	root.SetOut(a.env.Stdout)
	root.SetErr(a.env.Stderr)
	// Help and usage are cobra's own functions, never text/template
	// templates: a template makes the linker keep every exported method
	// of the binary, which takes it past the release's size limit.
	help := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		help(cmd, args)
		fmt.Fprint(cmd.OutOrStdout(), footer)
	})
	// `ingest help TOPIC`: cobra's own prints the root help and exits 0 for
	// a topic that names no command; here that is a usage error with a
	// suggestion, like `ingest TOPIC`.
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "help about any command",
		Run: func(_ *cobra.Command, args []string) {
			target, _, err := root.Find(args)
			if err != nil || target == nil || (target == root && len(args) > 0) {
				a.usageError(root, &unknownCommandError{name: args[0]})
				a.code = ExitUsage
				return
			}
			target.InitDefaultHelpFlag()
			target.Help()
		},
	})
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return &flagError{err: err} })
	root.AddCommand(
		a.loadCommand(),
		a.runCommand(),
		a.demoCommand(),
		a.backfillCommand(),
		a.overridesCommand(),
		a.refreshCommand(),
		a.supplementalCommand(),
		a.statusCommand(),
		a.reportCommand(),
		a.auditCommand(),
		a.previewCommand(),
		a.verifyCommand(),
		a.compareCommand(),
		a.migrateCommand(),
		a.adoptCommand(),
		a.readerCommand(),
		a.datasetsCommand(),
		a.exportCommand(),
		a.versionCommand(),
	)
	// Added now rather than when the tree runs, so that Find knows them.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}

// command builds a command whose options are declared on the returned
// settings; body runs once they are resolved (an environment value they
// refuse is a usage error naming the variable). maxArgs bounds the
// positional arguments (-1: any number).
func (a *app) command(use, short, long string, maxArgs int) (*cobra.Command, *settings, func(body func(ctx context.Context, args []string) int)) {
	cmd := &cobra.Command{Use: use, Short: short, Long: long}
	if maxArgs >= 0 {
		cmd.Args = func(_ *cobra.Command, args []string) error {
			if len(args) > maxArgs {
				return fmt.Errorf("unexpected argument %q", args[maxArgs])
			}
			return nil
		}
	}
	s := newSettings(cmd.Flags(), a.env.Getenv)
	return cmd, s, func(body func(ctx context.Context, args []string) int) {
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			if err := s.resolve(); err != nil {
				return err
			}
			a.code = body(cmd.Context(), args)
			return nil
		}
	}
}

// group builds a command of actions (ingest migrate up|down…): alone, or
// with another word, it is a usage error naming the actions.
func (a *app) group(use, short string, actions ...*cobra.Command) *cobra.Command {
	names := make([]string, len(actions))
	for i, c := range actions {
		names[i] = c.Name()
	}
	g := &cobra.Command{Use: use, Short: short,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("name an action: %s", strings.Join(names, ", "))
			}
			return &unknownCommandError{name: args[0], action: true, actions: names}
		},
		Run: func(*cobra.Command, []string) {},
	}
	g.AddCommand(actions...)
	// Run only refuses what is not an action: the usage shows no line
	// for the group alone.
	usage := g.UsageFunc()
	for _, c := range actions {
		c.SetUsageFunc(usage) // not the group's
	}
	g.SetUsageFunc(func(c *cobra.Command) error {
		w := c.OutOrStderr()
		fmt.Fprintf(w, "Usage:\n  %s [command]\n\nAvailable Commands:\n", c.CommandPath())
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				fmt.Fprintf(w, "  %-*s %s\n", c.NamePadding(), sub.Name(), sub.Short)
			}
		}
		fmt.Fprintf(w, "\nFlags:\n%s\nUse \"%s [command] --help\" for more information about a command.\n",
			c.LocalFlags().FlagUsages(), c.CommandPath())
		return nil
	})
	return g
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{Use: "version", Short: "print the version (as --version does)", Args: cobra.NoArgs,
		Run: func(*cobra.Command, []string) { a.printVersion() }}
}

func (a *app) printVersion() {
	fmt.Fprintln(a.env.Stdout, "ingest", toolVersion(a.env.Version))
}

// unknownCommandError is a word that names no command (or no action of a
// group).
type unknownCommandError struct {
	name    string
	action  bool
	actions []string
}

func (e *unknownCommandError) Error() string {
	if e.action {
		return fmt.Sprintf("unknown action %q (%s)", e.name, strings.Join(e.actions, ", "))
	}
	return fmt.Sprintf("unknown command %q", e.name)
}

// flagError is an error of pflag's parsing.
type flagError struct{ err error }

func (e *flagError) Error() string {
	var inv *pflag.InvalidValueError
	if errors.As(e.err, &inv) {
		return invalidValue(inv.GetValue(), inv.GetFlag().Name, "", errors.Unwrap(inv)).Error()
	}
	var ne *pflag.NotExistError
	if errors.As(e.err, &ne) && len(ne.GetSpecifiedShortnames()) > 1 {
		// -bogus: a long flag with one dash, none of the known ones.
		return fmt.Sprintf("unknown flag: -%s (flags take two dashes: --%s)", ne.GetSpecifiedShortnames(), ne.GetSpecifiedShortnames())
	}
	return e.err.Error()
}

// usageError prints a usage error in three lines at most: the error, a
// suggestion when a command or flag is close to what was typed, and where
// the help is.
func (a *app) usageError(cmd *cobra.Command, err error) {
	w := a.env.Stderr
	fmt.Fprintf(w, "%s: %v\n", cmd.CommandPath(), err)
	var suggestion string
	var uc *unknownCommandError
	var fe *flagError
	var ne *pflag.NotExistError
	switch {
	case errors.As(err, &uc):
		cmd.SuggestionsMinimumDistance = 2
		if s := cmd.SuggestionsFor(uc.name); len(s) > 0 {
			suggestion = fmt.Sprintf("%q", s[0])
		}
	case errors.As(err, &fe) && errors.As(fe.err, &ne):
		typed := ne.GetSpecifiedName()
		if len(ne.GetSpecifiedShortnames()) > 1 {
			typed = ne.GetSpecifiedShortnames()
		}
		if s := closestFlag(cmd, typed); s != "" {
			suggestion = "--" + s
		}
	}
	if suggestion != "" {
		fmt.Fprintf(w, "Did you mean %s?\n", suggestion)
	}
	fmt.Fprintf(w, "Run '%s --help' for usage.\n", cmd.CommandPath())
}

// closestFlag is a visible flag of cmd close to typed, "" when none is:
// cobra suggests flags as it suggests commands (within two edits, or typed
// is a prefix), so the flags are given to it as the commands of a scratch
// command.
func closestFlag(cmd *cobra.Command, typed string) string {
	flags := &cobra.Command{SuggestionsMinimumDistance: 2}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			flags.AddCommand(&cobra.Command{Use: f.Name, Run: func(*cobra.Command, []string) {}})
		}
	})
	if s := flags.SuggestionsFor(typed); len(s) > 0 {
		return s[0]
	}
	return ""
}

// oldFlag is a long flag written with one dash (-run-id, -format=json),
// the form the standard library's flag package took.
var oldFlag = regexp.MustCompile(`^-([a-z][a-z0-9]*(?:-[a-z0-9]+)+|[a-z][a-z0-9]+)(=.*)?$`)

// singleDash rewrites the old single-dash long flags of the command line
// (-run-id N) as pflag takes them (--run-id N), warning once for each:
// scripts written for the earlier command line keep working while they
// are updated. Only a known flag of the command is rewritten; a value of
// the flag before it, or anything after "--", is left alone.
func (a *app) singleDash(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil {
		cmd = root
	}
	out := make([]string, len(args))
	copy(out, args)
	valueNext := false
	for i, arg := range out {
		if arg == "--" {
			break
		}
		if valueNext {
			valueNext = false
			continue
		}
		name, hasValue := "", false
		if m := oldFlag.FindStringSubmatch(arg); m != nil {
			name, hasValue = m[1], m[2] != ""
			if f := cmd.Flags().Lookup(name); f != nil {
				out[i] = "-" + arg
				fmt.Fprintf(a.env.Stderr, "ingest: warning: -%s is the old single-dash form: write --%s\n", name, name)
				valueNext = !hasValue && f.NoOptDefVal == ""
				continue
			}
		}
		if after, ok := strings.CutPrefix(arg, "--"); ok && !strings.Contains(after, "=") {
			if f := cmd.Flags().Lookup(after); f != nil {
				valueNext = f.NoOptDefVal == ""
			}
		}
	}
	return out
}
