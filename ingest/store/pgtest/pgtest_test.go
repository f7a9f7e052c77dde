package pgtest

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// The prefix comes from the environment and must be an identifier that
// needs no quoting and leaves room for the longest name built on it.
func TestPrefix(t *testing.T) {
	for _, tc := range []struct {
		env, want string
		ok        bool
	}{
		{"", DefaultPrefix, true},
		{"teamx_", "teamx_", true},
		{"_ci42_", "_ci42_", true},
		{strings.Repeat("a", 30), strings.Repeat("a", 30), true},
		{strings.Repeat("a", 31), "", false},
		{"TeamX_", "", false},
		{"9team_", "", false},
		{"team-x_", "", false},
		{"x; DROP DATABASE postgres; --", "", false},
		{`x"`, "", false},
	} {
		t.Setenv(PrefixEnv, tc.env)
		got, err := Prefix()
		if !tc.ok {
			require.ErrorContains(t, err, PrefixEnv, tc.env)
			continue
		}
		require.NoError(t, err, tc.env)
		require.Equal(t, tc.want, got)
	}
}

// Every database New, NewEmpty and the template are created under carries
// the prefix, and each is gone once its test (or the template's process)
// ends.
func TestDatabasesCarryThePrefix(t *testing.T) {
	const prefix = "pgtest_prefix_probe_"
	t.Setenv(PrefixEnv, prefix)
	var names []string
	t.Run("create", func(t *testing.T) {
		for _, raw := range []string{New(t), NewEmpty(t)} {
			u, err := url.Parse(raw)
			require.NoError(t, err)
			name := strings.TrimPrefix(u.Path, "/")
			require.True(t, strings.HasPrefix(name, prefix), name)
			names = append(names, name)
		}
		templates.mu.Lock()
		tmpl := templates.name
		templates.mu.Unlock()
		require.True(t, strings.HasPrefix(tmpl, prefix+"tmpl_"), tmpl)
		require.Len(t, names, 2)
	})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, AdminURL())
	require.NoError(t, err)
	defer conn.Close(ctx)
	var left int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = ANY($1)", names).Scan(&left))
	require.Zero(t, left, "dropped when the test ends: %v", names)
}
