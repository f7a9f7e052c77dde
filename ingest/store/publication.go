package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/ingest/promotion"
	"github.com/inferencex/ingest/schema"
)

// StagedIngest reads the newest finished ingest of the source run into
// target from this database's ledger (a staging database's), of the
// run's attempt when that attempt was staged, for a promotion to compare
// with; false when there is none.
func (s *Store) StagedIngest(ctx context.Context, run schema.RunIdentity, target string) (promotion.Staged, bool, error) {
	st := promotion.Staged{Target: target}
	var server, artifacts string
	err := s.pool.QueryRow(ctx, qStagedIngest, run.Repo, run.SourceRunID, target, run.SourceRunAttempt).
		Scan(&st.IngestID, &st.Attempt, &st.TreeDigest, &server, &artifacts, &st.FileIndex)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, false, nil
	}
	if err != nil {
		return st, false, s.opts.explain(fmt.Sprintf("read the staged ingest of run %d", run.SourceRunID), err)
	}
	if server != "" {
		st.Server = new(schema.ServerIdentity)
		if err := json.Unmarshal([]byte(server), st.Server); err != nil {
			return st, false, fmt.Errorf("staged ingest #%d: the server it records: %w", st.IngestID, err)
		}
	}
	st.Artifacts = json.RawMessage(artifacts)
	return st, true, nil
}
