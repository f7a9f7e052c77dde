package ingest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/fixtures/generate"
	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// TestFirstIngestDigestIsTheTreesDigest: a first ingest computes its tree
// digest after the stages, from the sha256 of every file they read in full
// (and of every zip, from its load); that digest must be the one of
// reading every file of the tree, for trees of every artifact kind, as
// folders and as the zips `ingest run` caches. A wrong sum taken from a
// stage would otherwise be recorded, and a rerun's file index would carry
// it on unnoticed.
func TestFirstIngestDigestIsTheTreesDigest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, zip := range []bool{false, true} {
		name := "folders"
		if zip {
			name = "zips"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.deps.Build = []byte("test build")
			dir, _ := evalTree(t, generate.Options{Points: 24, Seed: 31, Evals: 2, EvalDocs: 3, AgentX: 2,
				Telemetry: true, PowerAudits: true, Zip: zip})
			d := source.StartDigest(ctx, dir)
			sum := e.mustIngest(dir, ingest.Config{TreeDigest: d})
			require.Equal(t, schema.StatusSucceeded, sum.Status, "%v", sum.Failures)
			require.Positive(t, sum.Rows.Trace.New+sum.Rows.Power.New, "the tree has traces and telemetry")
			got, _, err := d.Wait(ctx)
			require.NoError(t, err)

			fresh := source.StartDigest(ctx, dir)
			fresh.Use(nil) // every file read by the digest itself
			want, _, err := fresh.Wait(ctx)
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
}
