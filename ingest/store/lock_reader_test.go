package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/ingest/store/pgtest"
	"github.com/inferencex/ingest/schema"
)

// TestRunLockHeldByReaderRefused: the dashboard's reader role (SELECT
// only) can take a run's advisory lock, as every role can; an ingest of
// that run, even with no lock timeout, does not wait for it but fails at
// once with an error naming the holder's pid and role, and so does an
// apply of a ledger naming the run. Nothing is written.
func TestRunLockHeldByReaderRefused(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	st, err := store.OpenWith(t.Context(), db, store.Options{}, zap.NewNop())
	require.NoError(t, err)
	defer st.Close()
	role := readerRole(t, st, db)

	u, err := url.Parse(db)
	require.NoError(t, err)
	u.User = url.User(role)
	reader, err := pgx.Connect(t.Context(), u.String())
	require.NoError(t, err)
	defer reader.Close(context.WithoutCancel(t.Context()))
	var pid int32
	require.NoError(t, reader.QueryRow(t.Context(), `SELECT pg_backend_pid() FROM (SELECT pg_advisory_lock(`+store.RunLockKey+`)) l`, int64(42)).Scan(&pid))

	// The old behaviour waited without end: the deadline turns a hang
	// into a failure of the assertions below.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err = st.BeginRun(ctx, start(42))
	var nonWriter *store.LockHeldByNonWriterError
	require.True(t, errors.As(err, &nonWriter), "%v", err)
	require.EqualError(t, err, fmt.Sprintf("the advisory lock of run 42 is held by pid %d, role %s, application (none), and that role cannot write "+
		"the ingest's tables: not waiting for it (end that session, e.g. SELECT pg_terminate_backend(%d), and run again)", pid, role, pid))

	_, _, err = st.ApplyOverrides(ctx, schema.OverridePlan{PurgedRuns: []schema.OverrideRun{{RunID: 7, Reason: "x"}, {RunID: 42, Reason: "y"}}}, false, "test")
	require.True(t, errors.As(err, &nonWriter), "%v", err)
	require.Equal(t, pid, nonWriter.Holder.PID)
	require.Equal(t, role, nonWriter.Holder.Role)
	require.Zero(t, count(t, st, "ingests"))
	require.Zero(t, count(t, st, "override_applications"))
}

// readerRole makes a reader role as `ingest reader create` does and drops
// it (from a session of its own, db) when the test ends. Roles belong to the server, so the name is random.
func readerRole(t *testing.T, st *store.Store, db string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	role := "ingest_lock_reader_" + hex.EncodeToString(b)
	plan, err := st.PlanReader(t.Context(), role)
	require.NoError(t, err)
	require.NoError(t, st.ApplyReader(t.Context(), plan))
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		admin, err := pgx.Connect(ctx, db)
		require.NoError(t, err)
		defer admin.Close(ctx)
		r := pgx.Identifier{role}.Sanitize()
		_, err = admin.Exec(ctx, "DROP OWNED BY "+r)
		require.NoError(t, err)
		_, err = admin.Exec(ctx, "DROP ROLE "+r)
		require.NoError(t, err)
	})
	return role
}
