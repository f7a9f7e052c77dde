package cli_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/cli"
)

// Commands of one action and one argument (reader create ROLE, datasets
// load FILE) refuse another action, a missing or an extra argument as
// usage errors, before any database is reached.
func TestActionUsage(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"DATABASE_URL": unreachableURL}
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"reader", "drop", "r"}, `ingest reader: unknown action "drop" (create)`},
		{[]string{"reader", "create"}, "ingest reader create: name the role"},
		{[]string{"reader", "create", "a", "b"}, `ingest reader create: unexpected argument "b"`},
		{[]string{"datasets", "list"}, `ingest datasets: unknown action "list" (load)`},
		{[]string{"datasets", "load", "--dataset", "x/y"}, "ingest datasets load: name the corpus file"},
		{[]string{"datasets"}, "ingest datasets: name an action: load"},
	} {
		r := run(t, vars, tc.args...)
		requireCode(t, cli.ExitUsage, r)
		require.Contains(t, r.stderr, tc.wantErr, "%v", tc.args)
	}
}
