package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/inferencex/ingest/ingest/store"
)

// ProductionTarget is the target every command writes to and reads from
// unless told otherwise: the database the site serves.
const ProductionTarget = "production"

// A target names a database. production is always known; any other
// (staging, dev, a branch database) is known when its URL is configured:
//
//  1. --database-url given on the command line (for whatever target is named);
//  2. DATABASE_WRITE_URL_<NAME> in the environment (NAME upper-cased, '-'
//     and '.' as '_': DATABASE_WRITE_URL_STAGING, DATABASE_WRITE_URL_PR_123);
//  3. the targets file (--targets-file, INGEST_TARGETS_FILE): a JSON object
//     of name → {"url": "…"} or {"urlEnv": "VARIABLE"} (the variable holds
//     the URL, so the file never needs a password);
//  4. production only: DATABASE_WRITE_URL, DATABASE_URL, then the local
//     default.
//
// Any other target is unknown: a usage error before anything is read. A
// target other than production that reaches production's database is
// refused too: a "staging" run that lands in production is what targets
// exist to prevent.
type target struct {
	name string
	url  string
	// from says where the URL came from, for messages (never the URL).
	from string
}

// targetName is what a target may be called.
var targetName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,62}$`)

// targetEnv is the environment variable holding a target's URL.
func targetEnv(name string) string {
	return "DATABASE_WRITE_URL_" + strings.NewReplacer("-", "_", ".", "_").Replace(strings.ToUpper(name))
}

// targetEntry is one target of the targets file.
type targetEntry struct {
	URL    string `json:"url,omitempty"`
	URLEnv string `json:"urlEnv,omitempty"`
}

// readTargetsFile reads the targets file (none when path is empty).
func readTargetsFile(path string) (map[string]targetEntry, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m map[string]targetEntry
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for name, e := range m {
		if !targetName.MatchString(name) {
			return nil, fmt.Errorf("%s: target %q: names are lower-case letters, digits, '.', '_' and '-'", path, name)
		}
		if (e.URL == "") == (e.URLEnv == "") {
			return nil, fmt.Errorf("%s: target %q: give exactly one of url and urlEnv", path, name)
		}
	}
	return m, nil
}

// resolveTarget settles the target of a command and its database URL from
// the options (see target). dbURL is the --database-url setting, resolved
// as for production (flag, DATABASE_WRITE_URL, DATABASE_URL, default).
func resolveTarget(name string, dbURL *setting, file string, getenv func(string) string) (target, error) {
	if name == "" {
		name = ProductionTarget
	}
	if !targetName.MatchString(name) {
		return target{}, fmt.Errorf("--target %q: names are lower-case letters, digits, '.', '_' and '-'", name)
	}
	entries, err := readTargetsFile(file)
	if err != nil {
		return target{}, fmt.Errorf("--targets-file: %w", err)
	}
	lookup := func(n string) (target, bool, error) {
		if v := strings.TrimSpace(getenv(targetEnv(n))); v != "" {
			return target{name: n, url: v, from: targetEnv(n)}, true, nil
		}
		if e, ok := entries[n]; ok {
			if e.URL != "" {
				return target{name: n, url: e.URL, from: "the targets file"}, true, nil
			}
			v := strings.TrimSpace(getenv(e.URLEnv))
			if v == "" {
				return target{}, false, fmt.Errorf("target %q: the targets file takes its URL from %s, which is not set", n, e.URLEnv)
			}
			return target{name: n, url: v, from: e.URLEnv}, true, nil
		}
		return target{}, false, nil
	}
	production := func() (target, error) {
		t, ok, err := lookup(ProductionTarget)
		if err != nil || ok {
			return t, err
		}
		if !dbURL.given {
			return target{name: ProductionTarget, url: dbURL.value, from: dbURL.label()}, nil
		}
		// --database-url names this command's database, not production's.
		for _, e := range dbURL.envs {
			if v := strings.TrimSpace(getenv(e)); v != "" {
				return target{name: ProductionTarget, url: v, from: e}, nil
			}
		}
		return target{name: ProductionTarget, url: dbURL.def, from: "the default"}, nil
	}
	var t target
	switch {
	case dbURL.given:
		t = target{name: name, url: dbURL.value, from: "--database-url"}
	case name == ProductionTarget:
		if t, err = production(); err != nil {
			return target{}, err
		}
	default:
		var ok bool
		if t, ok, err = lookup(name); err != nil {
			return target{}, err
		} else if !ok {
			return target{}, fmt.Errorf("unknown target %q: set %s or name it in the targets file (--targets-file); known: %s",
				name, targetEnv(name), strings.Join(knownTargets(entries), ", "))
		}
	}
	if err := store.CheckURL(t.url); err != nil {
		if t.from == dbURL.label() || t.from == "--database-url" {
			return target{}, fmt.Errorf("%s: %v", dbURL.label(), err)
		}
		return target{}, fmt.Errorf("target %s (URL from %s): %v", t.name, t.from, err)
	}
	if t.name != ProductionTarget {
		p, err := production()
		if err == nil && store.Address(p.url) != "" && store.Address(p.url) == store.Address(t.url) {
			return target{}, fmt.Errorf("target %s (URL from %s) is the production database %s: a target other than production needs a database of its own",
				t.name, t.from, store.DatabaseName(t.url))
		}
	}
	return t, nil
}

// knownTargets lists production and the targets of the file (those of
// the environment are not listed: the message names the variable).
func knownTargets(entries map[string]targetEntry) []string {
	names := []string{ProductionTarget}
	for n := range entries {
		if n != ProductionTarget {
			names = append(names, n)
		}
	}
	sort.Strings(names[1:])
	return names
}
