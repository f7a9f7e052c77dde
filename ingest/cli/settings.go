package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/inferencex/ingest/ingest/store"
)

// setting is one option: a flag, the environment variables that stand in
// for it, and a default. Precedence: flag > environment > default.
type setting struct {
	name  string
	envs  []string
	def   string
	usage string
	value string
	// from is the environment variable the value came from ("" when it
	// is a flag or the default).
	from string
	// given is set when the value came from the command line.
	given bool
}

// settings is the option set of one command.
type settings struct {
	fs    *flag.FlagSet
	items []*setting
	bools map[string]*bool
	env   func(string) string
}

func newSettings(fs *flag.FlagSet, env func(string) string) *settings {
	return &settings{fs: fs, bools: map[string]*bool{}, env: env}
}

// str declares a string option.
func (s *settings) str(name, def, usage string, envs ...string) *setting {
	it := &setting{name: name, envs: envs, def: def, usage: usage}
	help := usage
	if len(envs) > 0 {
		help += " (env " + strings.Join(envs, ", ") + ")"
	}
	if def != "" {
		help += fmt.Sprintf(" (default %q)", def)
	}
	s.fs.StringVar(&it.value, name, "", help)
	s.items = append(s.items, it)
	return it
}

// flag declares a boolean switch; env values "1", "true", "yes" turn it on.
func (s *settings) flag(name, usage string, envs ...string) *bool {
	b := new(bool)
	help := usage
	if len(envs) > 0 {
		help += " (env " + strings.Join(envs, ", ") + ")"
	}
	s.fs.BoolVar(b, name, false, help)
	s.bools[name] = b
	s.items = append(s.items, &setting{name: name, envs: envs})
	return b
}

// resolve applies environment and defaults to options not given as flags.
func (s *settings) resolve() {
	given := map[string]bool{}
	s.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, it := range s.items {
		if given[it.name] {
			it.given = true
			continue
		}
		envVal, from := "", ""
		for _, e := range it.envs {
			if v := strings.TrimSpace(s.env(e)); v != "" {
				envVal, from = v, e
				break
			}
		}
		if b, ok := s.bools[it.name]; ok {
			switch strings.ToLower(envVal) {
			case "1", "true", "yes":
				*b = true
			}
			continue
		}
		if envVal != "" {
			it.value, it.from = envVal, from
		} else {
			it.value = it.def
		}
	}
}

func (it *setting) String() string { return it.value }

// label names the option in a message: the flag, and the environment
// variable when the value came from one.
func (it *setting) label() string {
	if it.from != "" {
		return fmt.Sprintf("--%s (from %s)", it.name, it.from)
	}
	return "--" + it.name
}

// timeout parses the option as a duration PostgreSQL takes as a timeout
// (0: no limit).
func (it *setting) timeout() (time.Duration, error) {
	d, err := time.ParseDuration(it.value)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a duration (such as 90s, 10m or 1h; 0 for no limit)", it.label(), it.value)
	}
	if err := store.CheckTimeout(d); err != nil {
		return 0, fmt.Errorf("%s: %v", it.label(), err)
	}
	return d, nil
}

// int64 parses the option as a positive integer (0 when empty).
func (it *setting) int64() (int64, error) {
	if it.value == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(it.value, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("--%s: %q is not a positive integer", it.name, it.value)
	}
	return v, nil
}
