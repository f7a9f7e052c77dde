package store

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/jackc/pgx/v5"
)

// evalSamplesPerBatch is about how many reference samples one batch of
// the eval sample copy takes: small enough to fill the trace readers'
// gaps, large enough that a batch's statements cost little more than
// one copy of the whole table.
const evalSamplesPerBatch = 100_000

// evalRows maps and copies the reference's eval rows and splits their
// samples into batches by eval id (evalBatch copies them).
func (a *adoption) evalRows(ctx context.Context) error {
	if err := a.exec(ctx, "", qAdoptEvalMap); err != nil {
		return err
	}
	if err := a.exec(ctx, "", qAdoptEvalMapAnalyze); err != nil {
		return err
	}
	if err := a.exec(ctx, "eval_results", qAdoptEvalResults); err != nil {
		return err
	}
	var samples int64
	for _, t := range a.p.Tables {
		if t.Name == "eval_samples" {
			samples = t.Rows
		}
	}
	per := a.o.EvalBatchSamples
	if per <= 0 {
		per = evalSamplesPerBatch
	}
	parts := min(max(samples/per, 1), 256)
	rows, _ := a.tx.Query(ctx, qAdoptEvalBounds, parts)
	bounds, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("adopt eval_samples: split into batches: %w", err)
	}
	a.evalBounds = bounds
	if len(a.evalBounds) > 0 {
		a.evalBounds[0] = math.MinInt64 // every sample's eval row is in a range
	}
	return nil
}

// evalBatch copies the next batch of reference samples (their texts, then
// the samples of unmerged eval rows, then those of merged ones, each
// document of a key once) and says whether it copied one.
func (a *adoption) evalBatch(ctx context.Context) (bool, error) {
	if len(a.evalBounds) == 0 {
		return false, nil
	}
	lo, hi := a.evalBounds[0], int64(math.MaxInt64)
	if len(a.evalBounds) > 1 {
		hi = a.evalBounds[1]
	}
	a.evalBounds = a.evalBounds[1:]
	copies := []struct{ table, sql string }{
		{"eval_sample_texts", qAdoptSampleTexts},
		{"eval_samples", strings.NewReplacer("{samples}", "public.eval_samples",
			"{merged}", "NOT m.merged AND s.eval_result_id >= $1 AND s.eval_result_id < $2").Replace(qAdoptEvalSamples)},
		{"eval_samples", strings.NewReplacer("{samples}", qAdoptMergedSamples, "{merged}", "m.merged").Replace(qAdoptEvalSamples)},
	}
	for _, c := range copies {
		if err := a.exec(ctx, c.table, c.sql, lo, hi); err != nil {
			return false, err
		}
	}
	return true, nil
}
