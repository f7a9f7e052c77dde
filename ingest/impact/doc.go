// Package impact tells what a run does to the published dashboard
// (latest_benchmarks): per touched curve the points gained, replaced and
// dropped, the relative change of each replaced point, the Pareto frontier
// before and after on the dashboard's charts, and the coverage a run takes
// away (the coverage guard). It computes from the curves' rows before and
// after (store.RunTx.CurveImpact) and reads nothing else.
package impact
