package cli

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/store"
)

// setting is one option of one command, declared in one place: its flag,
// the environment variables that stand in for it, its default and the
// check of its values. Precedence: flag > environment > default. A value
// is checked where it comes from — the flag when pflag parses it, the
// environment when the command resolves it — and a bad one is a usage
// error naming its source (invalid value "x" for --format (from
// INGEST_REPORT_FORMAT): want text|md|json).
type setting struct {
	name  string
	envs  []string
	def   string
	usage string
	// typ is the value's type as --help shows it (int, duration, text|json…).
	typ string
	// check returns the "want …" reason a value is refused (nil: any value).
	check func(string) error
	value string
	// from is the environment variable the value came from ("" when it
	// is a flag or the default).
	from string
	// given is set when the value came from the command line.
	given bool
}

// Set is pflag's way in: a value given on the command line.
func (it *setting) Set(v string) error {
	if it.check != nil {
		if err := it.check(v); err != nil {
			return err
		}
	}
	it.value, it.given = v, true
	return nil
}

// Type names the value in --help ("bool" shows none).
func (it *setting) Type() string { return it.typ }

func (it *setting) String() string { return it.value }

// label names the option in a message: the flag, and the environment
// variable when the value came from one.
func (it *setting) label() string {
	if it.from != "" {
		return fmt.Sprintf("--%s (from %s)", it.name, it.from)
	}
	return "--" + it.name
}

// invalidValue is the error of a value its check refused.
func invalidValue(value, flag, from string, want error) error {
	if from != "" {
		return fmt.Errorf("invalid value %q for --%s (from %s): %v", value, flag, from, want)
	}
	return fmt.Errorf("invalid value %q for --%s: %v", value, flag, want)
}

// int64 is the option's integer value (0 when empty; checked already).
// requiredMissing is the usage error of the required options among items
// that have no value, naming them all at once with their variables
// ("--repo OWNER/NAME and --since DATE are required (or INGEST_REPO and
// INGEST_AUDIT_SINCE)"), so one run of the command lists everything it
// lacks; nil when every one has a value.
func requiredMissing(items ...*setting) error {
	var flags, envs []string
	for _, it := range items {
		if it.value != "" {
			continue
		}
		f := "--" + it.name
		if it.typ != "string" {
			f += " " + it.typ
		}
		flags = append(flags, f)
		envs = append(envs, it.envs...)
	}
	if len(flags) == 0 {
		return nil
	}
	verb := "is"
	if len(flags) > 1 {
		verb = "are"
	}
	msg := strings.Join(flags, " and ") + " " + verb + " required"
	if len(envs) > 0 {
		msg += " (or " + strings.Join(envs, " and ") + ")"
	}
	return errors.New(msg)
}

func (it *setting) int64() int64 {
	v, _ := strconv.ParseInt(it.value, 10, 64)
	return v
}

// duration is the option's duration (checked already).
func (it *setting) duration() time.Duration {
	d, _ := time.ParseDuration(it.value)
	return d
}

// bytes is the option's size in bytes (checked already).
func (it *setting) bytes() int64 {
	n, _ := parseByteSize(it.value)
	return n
}

// settings is the option set of one command.
type settings struct {
	fs    *pflag.FlagSet
	items []*setting
	bools map[*setting]*bool
	env   func(string) string
}

func newSettings(fs *pflag.FlagSet, env func(string) string) *settings {
	return &settings{fs: fs, bools: map[*setting]*bool{}, env: env}
}

// add declares the setting as a flag of the command.
func (s *settings) add(it *setting) *setting {
	help := it.usage
	if len(it.envs) > 0 {
		help += " (env " + strings.Join(it.envs, ", ") + ")"
	}
	f := s.fs.VarPF(it, it.name, "", help)
	f.DefValue = it.def
	if it.typ == "bool" {
		f.NoOptDefVal = "true"
	}
	s.items = append(s.items, it)
	return it
}

// str declares a string option any value of which is accepted.
func (s *settings) str(name, def, usage string, envs ...string) *setting {
	return s.add(&setting{name: name, envs: envs, def: def, usage: usage, typ: "string"})
}

// repo declares an option naming a GitHub repository, OWNER/NAME as
// GitHub allows them (github.CheckRepo): anything else would reach the
// API's URLs, the report and the ledger as a repository no run can have.
func (s *settings) repo(name, def, usage string, envs ...string) *setting {
	return s.add(&setting{name: name, envs: envs, def: def, usage: usage, typ: "OWNER/NAME", check: github.CheckRepo})
}

// enum declares an option taking one of values.
func (s *settings) enum(name, def string, values []string, usage string, envs ...string) *setting {
	want := strings.Join(values, "|")
	return s.add(&setting{name: name, envs: envs, def: def, usage: usage, typ: want, check: func(v string) error {
		for _, ok := range values {
			if v == ok {
				return nil
			}
		}
		return errors.New("want " + want)
	}})
}

// id declares a positive integer option, empty by default (a run id).
func (s *settings) id(name, usage string, envs ...string) *setting {
	return s.intIn(name, "", 1, math.MaxInt64, usage, envs...)
}

// intIn declares an integer option from lo to hi.
func (s *settings) intIn(name, def string, lo, hi int64, usage string, envs ...string) *setting {
	want := fmt.Errorf("want an integer from %d to %d", lo, hi)
	switch {
	case lo == 1 && hi == math.MaxInt64:
		want = errors.New("want a positive integer")
	case lo == 0 && hi == math.MaxInt64:
		want = errors.New("want a count (0 or more)")
	}
	return s.add(&setting{name: name, envs: envs, def: def, usage: usage, typ: "int", check: func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < lo || n > hi {
			return want
		}
		return nil
	}})
}

// duration declares a duration option; extra, when set, checks the
// parsed duration further.
func (s *settings) duration(name, def, usage string, extra func(time.Duration) error, envs ...string) *setting {
	return s.add(&setting{name: name, envs: envs, def: def, usage: usage, typ: "duration", check: func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return errors.New("want a duration such as 90s, 10m or 1h")
		}
		if extra != nil {
			return extra(d)
		}
		return nil
	}})
}

// timeout declares a duration PostgreSQL takes as a timeout (0: no limit).
func (s *settings) timeout(name, def, usage string, envs ...string) *setting {
	return s.duration(name, def, usage, func(d time.Duration) error {
		return store.CheckTimeout(d)
	}, envs...)
}

// size declares a byte size option (50GiB, 500MB, 1048576).
func (s *settings) size(name, def, usage string, envs ...string) *setting {
	return s.add(&setting{name: name, envs: envs, def: def, usage: usage, typ: "size", check: func(v string) error {
		_, err := parseByteSize(v)
		return err
	}})
}

// parseByteSize parses a size such as 50GiB, 500MB, 128KiB or 1048576.
func parseByteSize(s string) (int64, error) {
	v := strings.TrimSpace(s)
	num := strings.TrimRightFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.TrimSpace(v[len(num):])
	mult, ok := map[string]int64{"": 1, "B": 1, "KB": 1000, "MB": 1000 * 1000, "GB": 1000 * 1000 * 1000,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, errors.New("want a positive size such as 50GiB, 500MB or 1048576 (units B, KB, MB, GB, KiB, MiB, GiB)")
	}
	return n * mult, nil
}

// flag declares a boolean switch. On the command line --name, --name=true
// or --name=false; in the environment 1, true, yes or on, and 0, false,
// no or off (any case).
func (s *settings) flag(name, usage string, envs ...string) *bool {
	b := new(bool)
	it := s.add(&setting{name: name, envs: envs, usage: usage, typ: "bool", check: func(v string) error {
		_, err := parseBool(v)
		return err
	}})
	s.bools[it] = b
	return b
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, errors.New("want true or false (1, yes, on; 0, no, off)")
}

// hide keeps the named flags out of --help (they are declared so that a
// command can say why they do not apply).
func (s *settings) hide(names ...string) {
	for _, n := range names {
		s.fs.Lookup(n).Hidden = true
	}
}

// resolve applies the environment, then the defaults, to the options not
// given as flags; an environment value its option refuses is an error
// naming the variable.
func (s *settings) resolve() error {
	for _, it := range s.items {
		if !it.given {
			it.value, it.from = it.def, ""
			for _, e := range it.envs {
				if v := strings.TrimSpace(s.env(e)); v != "" {
					if it.check != nil {
						if err := it.check(v); err != nil {
							return invalidValue(v, it.name, e, err)
						}
					}
					it.value, it.from = v, e
					break
				}
			}
		}
		if b, ok := s.bools[it]; ok {
			*b, _ = parseBool(it.value)
		}
	}
	return nil
}
