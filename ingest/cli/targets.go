package cli

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/strictjson"
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
	// fallback: the URL is the built-in default, nothing configured it.
	fallback bool
	// viaSetting: the URL is the --database-url setting's (flag,
	// environment or default), whose label names it in errors.
	viaSetting bool
	// production is the production target a target other than
	// production must not be (checkServer); nil for production itself.
	production *target
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
	// Read strictly (strictjson.Decode): a target named twice, or a file
	// with a second object, would send a run to whichever URL a lenient
	// reader kept.
	var m map[string]targetEntry
	if err := strictjson.Decode(b, &m); err != nil {
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
			from := dbURL.from
			if from == "" {
				from = "the default"
			}
			return target{name: ProductionTarget, url: dbURL.value, from: from, fallback: dbURL.from == "", viaSetting: true}, nil
		}
		// --database-url names this command's database, not production's.
		for _, e := range dbURL.envs {
			if v := strings.TrimSpace(getenv(e)); v != "" {
				return target{name: ProductionTarget, url: v, from: e}, nil
			}
		}
		return target{name: ProductionTarget, url: dbURL.def, from: "the default", fallback: true}, nil
	}
	var t target
	switch {
	case dbURL.given:
		t = target{name: name, url: dbURL.value, from: "--database-url", viaSetting: true}
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
		if t.viaSetting {
			return target{}, fmt.Errorf("%s: %v", dbURL.label(), err)
		}
		return target{}, fmt.Errorf("target %s (URL from %s): %v", t.name, t.from, err)
	}
	if t.name != ProductionTarget {
		// The text of the URLs is a first, cheap check; what the servers
		// say (checkServer, once connected) is the authority.
		p, err := production()
		if err != nil {
			return target{}, fmt.Errorf("target %s needs production's URL to prove it is another database: %v", t.name, err)
		}
		if store.Address(p.url) != "" && store.Address(p.url) == store.Address(t.url) {
			return target{}, fmt.Errorf("target %s (URL from %s) is the production database %s: a target other than production needs a database of its own",
				t.name, t.from, store.DatabaseName(t.url))
		}
		t.production = &p
	}
	return t, nil
}

// origin says where a target's URL came from, for messages.
func (t target) origin() string {
	if t.fallback {
		return "the default URL"
	}
	return "URL from " + t.from
}

// sameDatabaseError refuses a target other than production that reaches
// production's database: a usage error (the configuration is wrong),
// found before anything is written.
type sameDatabaseError struct{ msg string }

func (e *sameDatabaseError) Error() string { return e.msg }

// checkServer proves, before a command writes or reads through st (the
// target's store), that a target other than production is not the
// production database: both servers are asked what they are
// (store.Store.Identity), whatever their URLs spell. It records the
// target's identity in c.server (a staged ingest records it in its
// ledger row).
//
// When production cannot be asked, the target cannot be proven other:
// refused, unless production's database does not exist on its server
// (then it is not this one) or nothing configures production (its URL is
// the built-in default: a staging job given only its own database).
func checkServer(ctx context.Context, c *commonOpts, st *store.Store, log *zap.Logger) error {
	t := c.target
	id, err := st.Identity(ctx)
	if err != nil {
		return fmt.Errorf("target %s: %w", t.name, err)
	}
	c.server = &id
	p := t.production
	if p == nil {
		return nil
	}
	notProven := func(err error) error {
		return fmt.Errorf("target %s (%s): cannot prove it is not the production database: production (%s) cannot be asked: %w; nothing was written",
			t.name, t.origin(), p.origin(), err)
	}
	pst, err := store.OpenWith(ctx, p.url, c.store, log.Named("production"))
	if err != nil {
		if store.IsMissingDatabase(err) || p.fallback {
			log.Warn("production's database cannot be asked whether it is the target's; going on", zap.String("target", t.name),
				zap.String("production", p.origin()), zap.Error(err))
			return nil
		}
		return notProven(err)
	}
	defer pst.Close()
	pid, err := pst.Identity(ctx)
	if err != nil {
		return notProven(err)
	}
	if id.Same(pid) {
		return &sameDatabaseError{msg: fmt.Sprintf("target %s (%s) and production (%s) are one database: %s; "+
			"a target other than production needs a database of its own; nothing was written", t.name, t.origin(), p.origin(), id)}
	}
	return nil
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
