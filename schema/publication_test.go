package schema_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

// TestServerIdentitySame: one database of one running cluster, whatever
// reached it; a clone (same system identifier, another start) is another
// server, and a role that cannot read the system identifier still tells
// servers apart by port and start time.
func TestServerIdentitySame(t *testing.T) {
	t.Parallel()
	base := schema.ServerIdentity{SystemID: "77", Port: 5432, Started: "2026-01-02T03:04:05.000001Z", Database: "ingest"}
	for _, tc := range []struct {
		name string
		edit func(*schema.ServerIdentity)
		same bool
	}{
		{"itself", func(*schema.ServerIdentity) {}, true},
		{"no system identifier readable", func(i *schema.ServerIdentity) { i.SystemID = "" }, true},
		{"another database", func(i *schema.ServerIdentity) { i.Database = "ingest_staging" }, false},
		{"a clone of the cluster", func(i *schema.ServerIdentity) { i.Started = "2026-02-02T03:04:05.000001Z" }, false},
		{"another cluster, same start", func(i *schema.ServerIdentity) { i.SystemID = "78" }, false},
		{"another port, unreadable identifier", func(i *schema.ServerIdentity) { i.SystemID, i.Port = "", 5433 }, false},
	} {
		other := base
		tc.edit(&other)
		require.Equal(t, tc.same, base.Same(other), tc.name)
		require.Equal(t, tc.same, other.Same(base), tc.name)
	}
}
