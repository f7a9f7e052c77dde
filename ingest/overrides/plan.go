package overrides

import (
	"cmp"
	"slices"

	"github.com/inferencex/ingest/schema"
)

// Plan is the whole ledger as the store applies it to stored data, in a
// fixed order (by run, then attempt, then point); gpuKeys are the keys a
// retired GPU power source takes.
func (o *Overrides) Plan(gpuKeys []string) schema.OverridePlan {
	p := schema.OverridePlan{GPUPowerKeys: slices.Clone(gpuKeys)}
	for id, c := range o.conclusions {
		p.Conclusions = append(p.Conclusions, schema.OverrideConclusion{RunID: id, Conclusion: c})
	}
	slices.SortFunc(p.Conclusions, func(a, b schema.OverrideConclusion) int { return cmp.Compare(a.RunID, b.RunID) })
	for _, r := range o.runs {
		attempts := slices.Clone(r.Attempts)
		slices.Sort(attempts)
		p.PurgedRuns = append(p.PurgedRuns, schema.OverrideRun{RunID: r.RunID, Attempts: slices.Compact(attempts), Reason: r.Reason, Shipped: r.shipped})
	}
	slices.SortFunc(p.PurgedRuns, func(a, b schema.OverrideRun) int { return cmp.Compare(a.RunID, b.RunID) })
	for k, x := range o.points {
		if _, ok := o.RunPurged(x.RunID, k.attempt); ok && k.attempt != 0 {
			continue // the attempt's purge covers it
		}
		p.PurgedPoints = append(p.PurgedPoints, schema.OverridePoint{RunID: x.RunID, Attempt: k.attempt, Point: *x.Point(), Reason: x.Reason, Shipped: x.shipped})
	}
	slices.SortFunc(p.PurgedPoints, func(a, b schema.OverridePoint) int {
		return cmp.Or(cmp.Compare(a.RunID, b.RunID), cmp.Compare(a.Attempt, b.Attempt), cmp.Compare(a.Point.Key(), b.Point.Key()))
	})
	for _, r := range o.retired {
		p.RetiredGPUPower = append(p.RetiredGPUPower, schema.OverrideRetired{RunID: r.RunID, Attempt: r.Attempt, HeadSHA: r.HeadSHA,
			Point: *r.Point(), Reason: r.Reason, CSVSHA256: r.CSVSHA256})
	}
	for _, b := range o.changelogBackfills {
		p.ChangelogBackfills = append(p.ChangelogBackfills, b.backfill())
	}
	for _, b := range o.pointBackfills {
		p.PointBackfills = append(p.PointBackfills, b.backfill())
	}
	return p
}
