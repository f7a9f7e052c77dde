// Package pgtest gives tests fresh, migrated PostgreSQL databases on the
// real server, each created from a migrated template and dropped when the
// test ends (or copied from a template the tests build once: NewFrom),
// and transactions on one shared migrated database rolled back when the
// test ends (Tx, RunTx), for tests that need no database of their own. Every database a test creates is named with one prefix
// (PrefixEnv, default "ingest_"), so teams sharing a server can tell their
// databases apart, and nothing here drops a database outside it.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/migrations"
	"github.com/inferencex/ingest/schema"
)

// AdminURLEnv names the variable that points tests at a server; its
// database must allow CREATE DATABASE.
const AdminURLEnv = "INGEST_TEST_DATABASE_URL"

const defaultAdminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// PrefixEnv names the variable that sets the prefix of every database the
// tests create (default DefaultPrefix).
const PrefixEnv = "INGEST_TEST_DB_PREFIX"

// DefaultPrefix is the prefix of the tests' databases when PrefixEnv is
// unset or empty.
const DefaultPrefix = "ingest_"

// safePrefix is a prefix that needs no quoting and that PostgreSQL does not
// fold (lower case), short enough that the longest name built on it (a
// template: prefix, "tmpl_", 8 hex digits, "_", 12 hex digits) fits the
// 63-byte identifier limit.
var safePrefix = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,29}$`)

// Prefix is the prefix of the tests' databases, from PrefixEnv or
// DefaultPrefix; a value that is not a safe identifier is an error naming
// the variable.
func Prefix() (string, error) {
	v := os.Getenv(PrefixEnv)
	if v == "" {
		return DefaultPrefix, nil
	}
	if !safePrefix.MatchString(v) {
		return "", fmt.Errorf("%s=%q: want a lower-case identifier of at most 30 characters (a-z, 0-9, _; not starting with a digit)", PrefixEnv, v)
	}
	return v, nil
}

// KindPrefix begins the names of a kind of test database: the prefix,
// kind and "_" ("ingest_bench_"), for code that names its own databases
// (the bench). kind must be a safe identifier part (a-z, 0-9, _). A bad
// prefix fails the test.
func KindPrefix(t testing.TB, kind string) string {
	t.Helper()
	p, err := Prefix()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return p + kind + "_"
}

// Name is a new database name for a test: KindPrefix and a random suffix
// ("ingest_hostile_1a2b3c4d5e6f").
func Name(t testing.TB, kind string) string {
	t.Helper()
	return KindPrefix(t, kind) + randomSuffix()
}

// AdminURL is the maintenance connection tests create databases through.
func AdminURL() string {
	if v := os.Getenv(AdminURLEnv); v != "" {
		return v
	}
	return defaultAdminURL
}

// Main runs a test binary's tests (call it from TestMain) and then drops
// the template database this process built, if it built one. Every test
// process builds its own template under a name no other process uses and
// drops only that one, so checkouts testing on one server never touch each
// other's databases, and none is left behind.
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	if _, err := Prefix(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		return 2
	}
	templates.mu.Lock()
	templates.main = true
	templates.mu.Unlock()
	code := m.Run()
	if err := dropShared(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	if err := dropTemplate(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// templates is the one template database of this test process: a test
// binary is one process, and its template lives exactly as long as it. The
// templates NewFrom builds live as long.
var templates struct {
	mu    sync.Mutex
	main  bool   // Main is running the tests
	name  string // created, not yet dropped
	err   error  // why it could not be built: every later test fails with it
	built map[string]*builtTemplate
}

// builtTemplate is a template NewFrom builds once per process and key.
type builtTemplate struct {
	once  sync.Once
	name  string // created, not yet dropped ("" if its creation failed)
	value any    // what its build returned
	err   error
}

// safeKey is a NewFrom key: a part of a database name that needs no
// quoting, short enough that the template's name (prefix, "tmpl_", key,
// "_", 12 hex digits) fits the 63-byte identifier limit.
var safeKey = regexp.MustCompile(`^[a-z0-9_]{1,15}$`)

// New creates a fresh database holding the current schema and returns its
// URL. The database is dropped when the test ends. The package's TestMain
// must run its tests through Main. Under -short the test is skipped: the
// inner loop creates no database per test (Tx and RunTx work in the shared
// one).
func New(t testing.TB) string {
	t.Helper()
	skipShort(t)
	return copyOf(t, func(ctx context.Context, admin *pgx.Conn) (string, error) { return ensureTemplate(ctx, admin) })
}

// copyOf creates a database for test t copied from the template tmpl
// names, dropped when the test ends, and returns its URL.
func copyOf(t testing.TB, tmpl func(ctx context.Context, admin *pgx.Conn) (string, error)) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		t.Fatalf("pgtest: connect to %s (start PostgreSQL or set %s): %v", AdminURL(), AdminURLEnv, err)
	}
	defer admin.Close(ctx)
	from, err := tmpl(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	name := Name(t, "test")
	if _, err := admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, from)); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	dropAtCleanup(t, name)
	return withDatabase(AdminURL(), name)
}

// NewFrom creates a fresh database copied from a template that this
// process builds once per key: build runs on an empty database (as
// NewEmpty makes it), which then becomes the template, and what build
// returned is returned with every copy. For tests that each need the same
// expensive starting point, such as a filled reference database: every
// test gets its own copy, dropped when the test ends; the template is
// dropped when Main ends. build must be deterministic in what it leaves
// and close its connections. key is a-z, 0-9 and _, at most 15 characters.
// Under -short the test is skipped, as with New.
func NewFrom[T any](t testing.TB, key string, build func(ctx context.Context, url string) (T, error)) (string, T) {
	t.Helper()
	skipShort(t)
	var zero T
	if !safeKey.MatchString(key) {
		t.Fatalf("pgtest: template key %q: want at most 15 of a-z, 0-9, _", key)
	}
	templates.mu.Lock()
	if !templates.main {
		templates.mu.Unlock()
		t.Fatalf("pgtest: the package's TestMain must call pgtest.Main, which drops the templates when the tests end")
	}
	if templates.built == nil {
		templates.built = map[string]*builtTemplate{}
	}
	b := templates.built[key]
	if b == nil {
		b = &builtTemplate{}
		templates.built[key] = b
	}
	templates.mu.Unlock()
	b.once.Do(func() { b.build(key, func(ctx context.Context, url string) (any, error) { return build(ctx, url) }) })
	if b.err != nil {
		t.Fatalf("pgtest: template %s: %v", key, b.err)
	}
	value, ok := b.value.(T)
	if !ok {
		t.Fatalf("pgtest: template %s was built with a %T, not a %T", key, b.value, zero)
	}
	return copyOf(t, func(context.Context, *pgx.Conn) (string, error) { return b.name, nil }), value
}

// build creates the template of key, runs build on it and marks it a
// template; from its creation on, Main drops it.
func (b *builtTemplate) build(key string, build func(ctx context.Context, url string) (any, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	prefix, err := Prefix()
	if err != nil {
		b.err = err
		return
	}
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		b.err = fmt.Errorf("connect to %s (start PostgreSQL or set %s): %w", AdminURL(), AdminURLEnv, err)
		return
	}
	defer admin.Close(ctx)
	name := prefix + "tmpl_" + key + "_" + randomSuffix()
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		b.err = fmt.Errorf("create %s: %w", name, err)
		return
	}
	b.name = name
	if b.value, err = build(ctx, withDatabase(AdminURL(), name)); err != nil {
		b.err = fmt.Errorf("build %s: %w", name, err)
		return
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+name+" WITH IS_TEMPLATE true"); err != nil {
		b.err = fmt.Errorf("mark %s a template: %w", name, err)
	}
}

// Shared is the URL of one migrated database for every test of this
// process that works in a transaction rolled back at its end (Tx, RunTx):
// created from the template on first use, dropped when Main ends. A test
// that must commit, or that counts rows other tests may write, takes its
// own database (New).
func Shared(t testing.TB) string {
	t.Helper()
	shared.once.Do(func() { shared.url, shared.name, shared.err = newShared() })
	if shared.err != nil {
		t.Fatalf("pgtest: %v", shared.err)
	}
	return shared.url
}

// shared is the process's shared database (Shared) and the store open on
// it (RunTx).
var shared struct {
	once      sync.Once
	url, name string
	err       error
	storeOnce sync.Once
	store     *store.Store
	storeErr  error
}

func newShared() (url, name string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		return "", "", fmt.Errorf("connect to %s (start PostgreSQL or set %s): %w", AdminURL(), AdminURLEnv, err)
	}
	defer admin.Close(ctx)
	tmpl, err := ensureTemplate(ctx, admin)
	if err != nil {
		return "", "", err
	}
	prefix, err := Prefix()
	if err != nil {
		return "", "", err
	}
	name = prefix + "shared_" + randomSuffix()
	if _, err := admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, tmpl)); err != nil {
		return "", "", fmt.Errorf("create database %s: %w", name, err)
	}
	return withDatabase(AdminURL(), name), name, nil
}

// Tx begins a transaction on the shared database (Shared) and rolls it
// back when the test ends: whatever the code under test writes through it
// is gone afterwards, and no database is created for the test.
func Tx(t testing.TB) pgx.Tx {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), Shared(t))
	if err != nil {
		t.Fatalf("pgtest: connect to the shared database: %v", err)
	}
	tx, err := conn.Begin(t.Context())
	if err != nil {
		conn.Close(context.Background())
		t.Fatalf("pgtest: begin: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := tx.Rollback(ctx); err != nil {
			t.Errorf("pgtest: roll back: %v", err)
		}
		conn.Close(ctx)
	})
	return tx
}

// RunTx opens a run's transaction (store.BeginRun: the run's lock, its
// workflow run and ledger rows, the staging tables) on the shared database
// and rolls it back when the test ends, for a stage's test to write
// through. Tests that run at once use distinct run ids, or the second
// waits for the first's lock.
func RunTx(t testing.TB, start schema.RunStart) *store.RunTx {
	t.Helper()
	shared.storeOnce.Do(func() {
		shared.store, shared.storeErr = store.Open(context.Background(), Shared(t), zap.NewNop())
	})
	if shared.storeErr != nil {
		t.Fatalf("pgtest: open the shared database: %v", shared.storeErr)
	}
	w, err := shared.store.BeginRun(t.Context(), start)
	if err != nil {
		t.Fatalf("pgtest: begin run %d: %v", start.Run.SourceRunID, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := w.Rollback(ctx); err != nil {
			t.Errorf("pgtest: roll back run %d: %v", start.Run.SourceRunID, err)
		}
	})
	return w
}

// NewEmpty creates a fresh database with no schema of ours (an empty public
// schema, as CREATE DATABASE makes it) and returns its URL; for tests that
// build another schema, such as the reference's. It is dropped when the test
// ends. It needs no template, so no TestMain. Under -short the test is
// skipped, as with New.
func NewEmpty(t testing.TB) string {
	t.Helper()
	skipShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		t.Fatalf("pgtest: connect to %s (start PostgreSQL or set %s): %v", AdminURL(), AdminURLEnv, err)
	}
	defer admin.Close(ctx)
	name := Name(t, "test_empty")
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	dropAtCleanup(t, name)
	return withDatabase(AdminURL(), name)
}

// Pool opens a pool on the database at url for a test's own queries,
// closed when the test ends.
func Pool(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatalf("pgtest: open a pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// DropAtCleanup drops the database name, if it exists, when the test ends:
// for a database the test has the code under test create.
func DropAtCleanup(t testing.TB, name string) { dropAtCleanup(t, name) }

// skipShort skips a test that needs a database of its own under -short.
func skipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("creates a database of its own: not under -short")
	}
}

// dropAtCleanup drops the database name when the test ends.
func dropAtCleanup(t testing.TB, name string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, AdminURL())
		if err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
		}
	})
}

// ensureTemplate builds, once per test process, a template database with
// every migration applied.
func ensureTemplate(ctx context.Context, admin *pgx.Conn) (string, error) {
	templates.mu.Lock()
	defer templates.mu.Unlock()
	if !templates.main {
		return "", fmt.Errorf("the package's TestMain must call pgtest.Main, which drops the template database when the tests end")
	}
	if templates.name != "" {
		return templates.name, templates.err
	}
	digest, err := migrationsDigest()
	if err != nil {
		return "", err
	}
	prefix, err := Prefix()
	if err != nil {
		return "", err
	}
	name := prefix + "tmpl_" + digest[:8] + "_" + randomSuffix()
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create template: %w", err)
	}
	templates.name = name // from here on Main drops it, whatever happens next
	templates.err = buildTemplate(ctx, admin, name)
	return name, templates.err
}

// buildTemplate migrates the new database name and marks it a template.
func buildTemplate(ctx context.Context, admin *pgx.Conn, name string) error {
	st, err := store.Open(ctx, withDatabase(AdminURL(), name), zap.NewNop())
	if err != nil {
		return err
	}
	_, _, err = st.MigrateUp(ctx)
	st.Close()
	if err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+name+" WITH IS_TEMPLATE true"); err != nil {
		return fmt.Errorf("mark template: %w", err)
	}
	return nil
}

// dropShared closes the shared store and drops the shared database, if
// this process made them.
func dropShared() error {
	if shared.store != nil {
		shared.store.Close()
	}
	if shared.name == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		return fmt.Errorf("drop %s: %w", shared.name, err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+shared.name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop %s: %w", shared.name, err)
	}
	return nil
}

// dropTemplate drops the templates this process built: the migrated one
// and NewFrom's.
func dropTemplate() error {
	templates.mu.Lock()
	defer templates.mu.Unlock()
	var names []string
	if templates.name != "" {
		names = append(names, templates.name)
	}
	for _, b := range templates.built {
		if b.name != "" {
			names = append(names, b.name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		return fmt.Errorf("drop templates %v: %w", names, err)
	}
	defer admin.Close(ctx)
	for _, name := range names {
		if _, err := admin.Exec(ctx, "ALTER DATABASE "+name+" WITH IS_TEMPLATE false"); err != nil {
			return fmt.Errorf("unmark template %s: %w", name, err)
		}
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop template %s: %w", name, err)
		}
	}
	templates.name = ""
	templates.built = nil
	return nil
}

func migrationsDigest() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash migrations: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func withDatabase(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Path = "/" + name
	return u.String()
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
