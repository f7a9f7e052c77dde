package schema

// What a run does to the published dashboard (latest_benchmarks): the
// report's impact section (issue 27), computed inside the run's
// transaction from the touched curves' rows before and after
// (CurveImpact).

import "reflect"

// Impact statuses.
const (
	// ImpactChanged: at least one point of a curve is gained, replaced or
	// dropped.
	ImpactChanged = "changed"
	// ImpactUnchanged: nothing the dashboard shows changes (a rerun, a run
	// older than its curves' newest, a run without benchmark rows).
	ImpactUnchanged = "unchanged"
	// ImpactUnknown: the update of latest_benchmarks failed or the schema
	// does not keep it per curve, so what the run does is not known.
	ImpactUnknown = "unknown"
)

// Coverage guard modes (--coverage-guard).
const (
	CoverageGuardWarn   = "warn"
	CoverageGuardRefuse = "refuse"
)

// Impact is the report's impact section.
type Impact struct {
	Status string `json:"status"`
	// CurvesTouched: curves the run's rows are on, or were on;
	// CurvesChanged: those whose points change.
	CurvesTouched int `json:"curvesTouched"`
	CurvesChanged int `json:"curvesChanged"`
	// Points the dashboard gains, replaces (a new row where a published one
	// was), drops, and keeps (the same row, perhaps under a new snapshot),
	// over every touched curve.
	PointsGained   int `json:"pointsGained"`
	PointsReplaced int `json:"pointsReplaced"`
	PointsDropped  int `json:"pointsDropped"`
	PointsKept     int `json:"pointsKept"`
	// RowsAdded / RowsRemoved are the rows the update of latest_benchmarks
	// added and removed (its own count): gained + replaced and replaced +
	// dropped must equal them (report.CheckImpact).
	RowsAdded   int64 `json:"rowsAdded"`
	RowsRemoved int64 `json:"rowsRemoved"`
	// CoverageLossCurves: curves the run shrinks (CurveChange.CoverageLoss);
	// Guard is the --coverage-guard mode that judged them (absent when no
	// curve loses coverage); Refused is set when the guard
	// rolled the run back; Accepted lists the curve keys whose loss was
	// acknowledged (--accept-coverage-loss).
	CoverageLossCurves int      `json:"coverageLossCurves"`
	Guard              string   `json:"guard,omitempty"`
	Refused            bool     `json:"refused,omitempty"`
	Accepted           []string `json:"accepted,omitempty"`
	// LossToken names the curves that lose coverage without an
	// acknowledgement by key (impact.LossToken): --accept-coverage-loss
	// takes it in place of their keys.
	LossToken string `json:"lossToken,omitempty"`
	// AppendOnly is the check of a run whose changelog marks it
	// append-only (absent for other runs): it may only add points.
	AppendOnly *AppendOnlyCheck `json:"appendOnly,omitempty"`
	// Curves are the changed curves, coverage losses first, then by the
	// number of changed points; curves only confirmed are counted, not
	// listed.
	Curves []CurveChange `json:"curves"`
	// Evals is the eval evidence: every eval task of the run (the first
	// description of each row, and the tasks whose harness failed).
	Evals []EvalEvidence `json:"evals,omitempty"`
}

// AppendOnlyCheck is what an append-only run did to the points the
// dashboard showed before: Added counts the points it gained; Touched
// lists every published point it replaced, re-ran or removed, which an
// append-only run must not do.
type AppendOnlyCheck struct {
	Added   int            `json:"added"`
	Touched []TouchedPoint `json:"touched"`
}

// How an append-only run touched a published point.
const (
	TouchedRemoved       = "removed"        // dropped, nothing in its place
	TouchedRerun         = "re-run"         // measured again, same recipe
	TouchedRecipeChanged = "recipe changed" // measured again with another recipe
	TouchedReplaced      = "replaced"       // another point in its place
)

// TouchedPoint is a published point an append-only run touched.
type TouchedPoint struct {
	Curve string `json:"curve"`
	Conc  int    `json:"conc"`
	Arm   string `json:"arm"`
	How   string `json:"how"`
}

// CurveChange is what the run does to one curve.
type CurveChange struct {
	// Key names the curve: model/hardware/framework/precision/sequence
	// and, for a fixed-sequence curve, spec method, agg|disagg and offload
	// mode (the benchmark_curve_scope). --accept-coverage-loss takes it.
	Key           string `json:"key"`
	Model         string `json:"model"`
	Hardware      string `json:"hardware"`
	Framework     string `json:"framework"`
	Precision     string `json:"precision"`
	BenchmarkType string `json:"benchmarkType"`
	ISL           *int   `json:"isl"`
	OSL           *int   `json:"osl"`
	SpecMethod    string `json:"specMethod"`
	Disagg        bool   `json:"disagg"`
	OffloadMode   string `json:"offloadMode"`

	Before CurveShape `json:"before"`
	After  CurveShape `json:"after"`

	Gained   []GainedPoints `json:"gained"`
	Replaced []Replacement  `json:"replaced"`
	Dropped  []ImpactPoint  `json:"dropped"`
	Kept     int            `json:"kept"`
	// SupersededRuns are the GitHub runs whose points the curve showed
	// before and no longer shows.
	SupersededRuns []RunRef `json:"supersededRuns"`
	// Frontiers: the Pareto frontier on each chart the dashboard draws.
	Frontiers []FrontierChange `json:"frontiers"`
	// CoverageLoss lists how the run shrinks the published curve (empty:
	// it does not); Accepted: the loss was acknowledged.
	CoverageLoss []string `json:"coverageLoss"`
	Accepted     bool     `json:"accepted,omitempty"`
}

// GainedCount is the number of points the curve gains.
func (c CurveChange) GainedCount() int {
	n := 0
	for _, g := range c.Gained {
		n += len(g.Concs)
	}
	return n
}

// GainedPoints are points a curve gains, grouped by arm, recipe and run:
// their concurrencies, ascending (a first ingest gains thousands; one
// group per arm keeps the JSON, which the ledger keeps, small).
type GainedPoints struct {
	Arm     string  `json:"arm"`
	Recipe  *string `json:"recipe,omitempty"`
	RunID   int64   `json:"runId"`
	Attempt int     `json:"attempt"`
	Concs   []int   `json:"concs"`
}

// CurveShape is one side of a curve: its points, arms (topology and
// offload variants), concurrency span and snapshot run.
type CurveShape struct {
	Points        int      `json:"points"`
	Arms          []string `json:"arms"`
	ConcMin       int      `json:"concMin"`
	ConcMax       int      `json:"concMax"`
	SnapshotRunID int64    `json:"snapshotRunId,omitempty"`
	SnapshotDate  string   `json:"snapshotDate,omitempty"`
}

// RunRef names a GitHub run and attempt.
type RunRef struct {
	RunID   int64 `json:"runId"`
	Attempt int   `json:"attempt"`
}

// ImpactPoint is one replaced or dropped point of a curve as the report
// shows it.
type ImpactPoint struct {
	Conc   int     `json:"conc"`
	Arm    string  `json:"arm"`
	Recipe *string `json:"recipe,omitempty"`
	RunID  int64   `json:"runId"`
	// Attempt of RunID.
	Attempt int         `json:"attempt"`
	Values  PointValues `json:"values"`
}

// FrontierPoint names a point on a frontier by concurrency and arm (its
// values are those of the curve's lists).
type FrontierPoint struct {
	Conc int    `json:"conc"`
	Arm  string `json:"arm"`
}

// Replacement is a published point and the new point that takes its place,
// matched by concurrency (same concurrency, preferring the same arm) or,
// where no concurrency matches, by the nearest median interactivity.
type Replacement struct {
	MatchedBy string      `json:"matchedBy"`
	Previous  ImpactPoint `json:"previous"`
	New       ImpactPoint `json:"new"`
	// Change is the relative change (new / previous - 1) of each value
	// both sides have.
	Change PointValues `json:"change"`
}

// Match kinds of a Replacement.
const (
	MatchedByConcurrency   = "concurrency"
	MatchedByInteractivity = "interactivity"
)

// FrontierChange is a curve's Pareto frontier on one chart, before and
// after.
type FrontierChange struct {
	// Chart: "interactivity" (tput_per_gpu, higher is better, over
	// median_intvty, higher is better) or "e2el" (tput_per_gpu over
	// p90_e2el, lower is better).
	Chart  string `json:"chart"`
	Before int    `json:"before"`
	After  int    `json:"after"`
	// New: points on the frontier after that were not on the curve before.
	New []FrontierPoint `json:"new"`
	// Lost: points on the frontier before that the curve no longer shows.
	Lost []LostFrontierPoint `json:"lost"`
	// Few: the frontier after has fewer than 5 points (the producer's
	// recommended minimum), on a curve that has points.
	Few bool `json:"few"`
	// BeforeLine and AfterLine are the frontier's points as the chart
	// draws them (x: the chart's axis, y: throughput per GPU), best x
	// first: what the report's before/after picture is drawn from.
	BeforeLine []FrontierXY `json:"beforeLine,omitempty"`
	AfterLine  []FrontierXY `json:"afterLine,omitempty"`
}

// FrontierXY is a point of a frontier on its chart.
type FrontierXY struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// LostFrontierPoint is a frontier point the curve no longer shows;
// Dominated: some point after is at least as good on both axes.
type LostFrontierPoint struct {
	FrontierPoint
	Dominated bool `json:"dominated"`
}

// PointValues are the values the impact section compares, by metric key
// (PointValueMetrics); nil where the row has none. Its SQL counterpart is
// the function benchmark_impact_values (migration 000021), whose columns
// the store's tests hold to these keys.
type PointValues struct {
	TputPerGPU       *float64 `json:"tput_per_gpu"`
	OutputTputPerGPU *float64 `json:"output_tput_per_gpu"`
	MedianIntvty     *float64 `json:"median_intvty"`
	P90E2EL          *float64 `json:"p90_e2el"`
	MedianTTFT       *float64 `json:"median_ttft"`
}

// EvalEvidence is one eval task of the run with what a reviewer compares
// it with: its score and effective samples, the producer's threshold for
// the model and task where one exists, the scores other runs published for
// the same model and task, how the model decoded, and an infrastructure
// failure (integration_error) in place of a score.
type EvalEvidence struct {
	Task       string `json:"task"`
	Model      string `json:"model,omitempty"`
	Hardware   string `json:"hardware,omitempty"`
	Framework  string `json:"framework,omitempty"`
	Precision  string `json:"precision,omitempty"`
	SpecMethod string `json:"specMethod,omitempty"`
	Disagg     bool   `json:"disagg,omitempty"`
	Conc       *int   `json:"conc"`
	// EffectiveSamples is the results file's n-samples effective (n_eff).
	EffectiveSamples *int     `json:"effectiveSamples"`
	Score            *float64 `json:"score"`
	ScoreName        string   `json:"scoreName,omitempty"`
	// Threshold is the producer's minimum score for the model and task
	// (InferenceX utils/evals/thresholds.yaml: the model's own, else the
	// task's default), ThresholdSource which; BelowThreshold: the score is
	// under it.
	Threshold       *float64 `json:"threshold"`
	ThresholdSource string   `json:"thresholdSource,omitempty"`
	BelowThreshold  bool     `json:"belowThreshold,omitempty"`
	// Decoding: "greedy" (temperature 0, no sampling), "sampled"
	// (do_sample or a positive temperature), "" when the results do not
	// say; Temperature and DoSample as read.
	Decoding    string   `json:"decoding,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	DoSample    *bool    `json:"doSample,omitempty"`
	// IntegrationError is the harness's infrastructure failure (the task
	// has no score); Artifact and File name where it was reported.
	IntegrationError string `json:"integrationError,omitempty"`
	Artifact         string `json:"artifact,omitempty"`
	File             string `json:"file,omitempty"`
	// Published are the newest scores of the same model and task from
	// other runs (at most 5, newest first).
	Published []PublishedScore `json:"published"`
}

// PublishedScore is an eval score another run stored.
type PublishedScore struct {
	RunID     int64   `json:"runId"`
	Date      string  `json:"date"`
	Hardware  string  `json:"hardware"`
	Framework string  `json:"framework"`
	Precision string  `json:"precision"`
	Conc      *int    `json:"conc"`
	Score     float64 `json:"score"`
}

// EvalTask names a model and task whose published scores are looked up.
type EvalTask struct {
	Model, Task string
}

// PointValueMetrics are the metric keys of PointValues, in field order:
// the columns of benchmark_impact_values and of latest_benchmark_points
// that keep them.
func PointValueMetrics() []string {
	t := reflect.TypeFor[PointValues]()
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i] = t.Field(i).Tag.Get("json")
	}
	return keys
}
