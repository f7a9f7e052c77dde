package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/ingest/promotion"
)

// StagedIngest reads the newest finished ingest of the source run into
// target from this database's ledger (a staging database's), for a
// promotion to compare with; false when there is none.
func (s *Store) StagedIngest(ctx context.Context, repo string, runID int64, target string) (promotion.Staged, bool, error) {
	st := promotion.Staged{Target: target}
	var artifacts string
	err := s.pool.QueryRow(ctx, qStagedIngest, repo, runID, target).Scan(&st.IngestID, &st.TreeDigest, &artifacts)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, false, nil
	}
	if err != nil {
		return st, false, s.opts.explain(fmt.Sprintf("read the staged ingest of run %d", runID), err)
	}
	st.Artifacts = json.RawMessage(artifacts)
	return st, true, nil
}
