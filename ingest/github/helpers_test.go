package github_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/inferencex/ingest/fixtures"
	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
	"github.com/inferencex/ingest/ingest/source"
)

const (
	testRepo  = "SemiAnalysisAI/InferenceX"
	testToken = "ghs_TESTTOKEN_must_never_leak_7f3a9c"
	demoRunID = 28485856738
)

// logBuffer collects log lines; safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// env is a fake serving the demo run and a client of it.
type env struct {
	fake   *fakegithub.Server
	client *github.Client
	cache  string
	logs   *logBuffer
	// demoArtifacts is the number of artifacts of the demo run; ids are
	// their listing ids by name.
	demoArtifacts int
	ids           map[string]int64
}

// newEnv starts a fake with the demo run loaded.
func newEnv(t *testing.T) *env {
	t.Helper()
	fake := fakegithub.New(t, testRepo, testToken)
	demo := t.TempDir()
	require.NoError(t, fixtures.WriteDemoRun(demo))
	_, err := fake.LoadTree(demo, 0)
	require.NoError(t, err)
	e := &env{fake: fake, cache: t.TempDir(), logs: &logBuffer{}, ids: map[string]int64{}}
	tree, err := source.Open(t.Context(), demo, nil)
	require.NoError(t, err)
	defer tree.Close()
	e.demoArtifacts = len(tree.Artifacts)
	for _, l := range tree.Listing {
		e.ids[l.Name] = l.ID
	}
	e.client = e.newClient(t, nil)
	return e
}

// id is the listing id of a demo artifact, as error messages print it.
func (e *env) id(t *testing.T, name string) string {
	t.Helper()
	id, ok := e.ids[name]
	require.True(t, ok, "demo artifact %s is not listed", name)
	return strconv.FormatInt(id, 10)
}

// newClient builds a client with fast retries; edit adjusts the options.
func (e *env) newClient(t *testing.T, edit func(*github.Options)) *github.Client {
	t.Helper()
	o := github.Options{
		BaseURL:        e.fake.BaseURL(),
		Token:          testToken,
		Repo:           testRepo,
		CacheDir:       e.cache,
		Parallel:       4,
		Retry:          github.RetryPolicy{Attempts: 4, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, MaxWait: 5 * time.Second},
		RequestTimeout: 2 * time.Second,
		StallTimeout:   300 * time.Millisecond,
		Log:            zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(e.logs), zap.DebugLevel)),
	}
	if edit != nil {
		edit(&o)
	}
	c, err := github.New(o)
	require.NoError(t, err)
	return c
}

// requireNoToken fails when the token appears in s or in any file under
// the cache.
func (e *env) requireNoToken(t *testing.T, texts ...string) {
	t.Helper()
	for _, s := range append(texts, e.logs.String()) {
		require.NotContains(t, s, testToken)
		require.NotContains(t, s, "TESTTOKEN")
	}
	require.NoError(t, filepath.Walk(e.cache, func(p string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		require.False(t, strings.Contains(string(data), "TESTTOKEN"), "token in %s", p)
		return nil
	}))
	require.Zero(t, e.fake.BlobAuthAttempts(), "a blob request carried the token")
}

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}
