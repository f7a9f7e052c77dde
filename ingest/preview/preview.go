// Package preview normalizes a run's aggregate artifacts (results_bmk,
// eval_results_all) without a database, into the rows the dashboard's
// unofficial-run overlay (?unofficialRun=) draws: the site's response
// shape {runInfo, benchmarks, evaluations}, filled by this ingest's own
// normalizer, so that the overlay and the database agree on every mapping.
package preview

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/eval"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// The aggregate artifacts the overlay reads, as the site names them, and
// the aggregate file each holds (every .json file of the artifact is read).
const (
	BenchmarkArtifact = "results_bmk"
	EvalArtifact      = "eval_results_all"
	BenchmarkFile     = "agg_bmk.json"
	EvalFile          = "agg_eval_all.json"
)

// RunInfo describes the run as the overlay's runInfo does.
type RunInfo struct {
	ID              int64   `json:"id"`
	Name            string  `json:"name"`
	Branch          *string `json:"branch"`
	SHA             string  `json:"sha"`
	CreatedAt       string  `json:"createdAt"`
	URL             string  `json:"url"`
	Conclusion      *string `json:"conclusion"`
	Status          *string `json:"status"`
	IsNonMainBranch bool    `json:"isNonMainBranch"`
}

// BenchmarkRow is one benchmark point as the overlay draws it: the
// deployment's config fields, the point and its metrics, the run's date.
type BenchmarkRow struct {
	schema.Config
	ISL     *int           `json:"isl"`
	OSL     *int           `json:"osl"`
	Conc    int            `json:"conc"`
	Image   *string        `json:"image"`
	Metrics map[string]any `json:"metrics"`
	Date    string         `json:"date"`
	RunURL  *string        `json:"run_url"`
}

// EvalRow is one eval result as the overlay draws it. ConfigID numbers
// the distinct deployments of the run from 1, in the order first read.
type EvalRow struct {
	ConfigID          int            `json:"config_id"`
	Hardware          string         `json:"hardware"`
	Framework         string         `json:"framework"`
	Model             string         `json:"model"`
	Precision         string         `json:"precision"`
	SpecMethod        string         `json:"spec_method"`
	DecodeTP          int            `json:"decode_tp"`
	DecodeEP          int            `json:"decode_ep"`
	DecodeDPAttention bool           `json:"decode_dp_attention"`
	Task              string         `json:"task"`
	Date              string         `json:"date"`
	Conc              *int           `json:"conc"`
	Metrics           map[string]any `json:"metrics"`
	Timestamp         string         `json:"timestamp"`
	RunURL            string         `json:"run_url"`
}

// Result is the overlay's response.
type Result struct {
	RunInfo     RunInfo        `json:"runInfo"`
	Benchmarks  []BenchmarkRow `json:"benchmarks"`
	Evaluations []EvalRow      `json:"evaluations"`
}

// Left says what the preview read but did not turn into rows, by reason
// (the overlay drops them silently; the command reports them).
type Left struct {
	BenchmarkRows map[string]int
	EvalRows      map[string]int
	Files         []string
	// NoBenchmarks and NoEvals say why no aggregate file of that kind was
	// read (no artifact, or an artifact without a .json file); "" when one
	// was.
	NoBenchmarks, NoEvals string
}

// Build normalizes the tree's newest results_bmk and eval_results_all
// artifacts. meta describes the run (the tree's listing, or GitHub's); a
// run without a creation time is dated now, as the site does.
func Build(tree *source.Tree, meta schema.RunMeta, n *benchmark.Normalizer, now time.Time) (Result, Left, error) {
	left := Left{BenchmarkRows: map[string]int{}, EvalRows: map[string]int{}}
	res := Result{RunInfo: runInfo(meta), Benchmarks: []BenchmarkRow{}, Evaluations: []EvalRow{}}
	date, timestamp := runDate(meta, now)
	var runURL *string
	bmk, evals := newest(tree, BenchmarkArtifact), newest(tree, EvalArtifact)
	if bmk == nil && evals == nil {
		return res, left, fmt.Errorf("no %s or %s artifact in the tree", BenchmarkArtifact, EvalArtifact)
	}
	if bmk == nil {
		left.NoBenchmarks = noArtifact(BenchmarkArtifact, BenchmarkFile)
	} else {
		files, err := eachJSON(bmk, func(file string, r io.Reader) error {
			_, err := benchmark.ReadRows(r, benchmark.ObjectOrArray, func(_ int, row map[string]any, err error) error {
				if err != nil {
					left.BenchmarkRows["malformed"]++
					return nil
				}
				p, o := n.Normalize(row)
				if o.Kind != benchmark.OK {
					left.BenchmarkRows[outcomeName(o)]++
					return nil
				}
				res.Benchmarks = append(res.Benchmarks, BenchmarkRow{Config: p.Config, ISL: p.ISL, OSL: p.OSL, Conc: p.Conc,
					Image: p.Image, Metrics: p.Metrics, Date: date, RunURL: runURL})
				return nil
			})
			if err != nil {
				left.Files = append(left.Files, fmt.Sprintf("%s / %s: %v", bmk.Name, file, err))
			}
			return nil
		})
		if err != nil {
			return res, left, err
		}
		if files == 0 {
			left.NoBenchmarks = noJSON(BenchmarkArtifact, BenchmarkFile)
		}
	}
	if evals == nil {
		left.NoEvals = noArtifact(EvalArtifact, EvalFile)
	} else {
		ids := map[schema.Config]int{}
		files, err := eachJSON(evals, func(file string, r io.Reader) error {
			err := eval.ReadAggregate(r, file, func(row eval.Row) {
				if row.SkipReason != "" {
					left.EvalRows["skipped: "+row.SkipReason]++
					return
				}
				cfg, o := n.ResolveConfig(row.Identity, row.Agentic)
				if o.Kind != benchmark.OK {
					left.EvalRows[outcomeName(o)]++
					return
				}
				id, ok := ids[cfg]
				if !ok {
					id = len(ids) + 1
					ids[cfg] = id
				}
				res.Evaluations = append(res.Evaluations, EvalRow{ConfigID: id, Hardware: cfg.Hardware, Framework: cfg.Framework,
					Model: cfg.Model, Precision: cfg.Precision, SpecMethod: cfg.SpecMethod, DecodeTP: cfg.DecodeTP, DecodeEP: cfg.DecodeEP,
					DecodeDPAttention: cfg.DecodeDPAttention, Task: row.Task, Date: date, Conc: row.Conc, Metrics: row.Metrics,
					Timestamp: timestamp, RunURL: meta.HTMLURL})
			}, func(b eval.BadRow) { left.EvalRows["failed: "+b.Reason]++ })
			if err != nil {
				left.Files = append(left.Files, fmt.Sprintf("%s / %s: %v", evals.Name, file, err))
			}
			return nil
		})
		if err != nil {
			return res, left, err
		}
		if files == 0 {
			left.NoEvals = noJSON(EvalArtifact, EvalFile)
		}
	}
	if left.NoBenchmarks != "" && left.NoEvals != "" {
		return res, left, fmt.Errorf("no aggregate file to preview: %s; %s", left.NoBenchmarks, left.NoEvals)
	}
	return res, left, nil
}

func noArtifact(artifact, file string) string {
	return fmt.Sprintf("no %s artifact (%s expected)", artifact, file)
}

func noJSON(artifact, file string) string {
	return fmt.Sprintf("%s holds no .json file (%s expected)", artifact, file)
}

// newest is the artifact of that name with the highest listing id (the
// site's choice among re-uploads), or the last one.
func newest(tree *source.Tree, name string) *source.Artifact {
	var best *source.Artifact
	for _, a := range tree.Artifacts {
		if a.Name != name || a.Err != nil {
			continue
		}
		if best == nil || best.Listing == nil || (a.Listing != nil && a.Listing.ID > best.Listing.ID) {
			best = a
		}
	}
	return best
}

// eachJSON calls fn with every .json file of the artifact, in path order,
// and returns how many there were.
func eachJSON(a *source.Artifact, fn func(file string, r io.Reader) error) (int, error) {
	fsys, err := a.FS()
	if err != nil {
		return 0, fmt.Errorf("artifact %s: %w", a.Name, err)
	}
	defer a.Release()
	files := 0
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("artifact %s: %w", a.Name, err)
		}
		if d.IsDir() || !strings.EqualFold(path.Ext(p), ".json") {
			return nil
		}
		f, err := fsys.Open(p)
		if err != nil {
			return fmt.Errorf("artifact %s: file %s: %w", a.Name, p, err)
		}
		defer f.Close()
		files++
		return fn(p, f)
	})
	return files, err
}

func outcomeName(o benchmark.Outcome) string {
	switch o.Kind {
	case benchmark.Skipped:
		return "skipped: " + o.SkipReason
	case benchmark.Unmapped:
		return "unmapped"
	default:
		return "failed"
	}
}

func runInfo(m schema.RunMeta) RunInfo {
	ri := RunInfo{ID: m.RunID, Name: m.Name, SHA: m.HeadSHA, URL: m.HTMLURL, IsNonMainBranch: m.HeadBranch != "main"}
	if !m.CreatedAt.IsZero() {
		ri.CreatedAt = m.CreatedAt.UTC().Format(time.RFC3339)
	}
	if m.HeadBranch != "" {
		ri.Branch = &m.HeadBranch
	}
	if m.Conclusion != "" {
		ri.Conclusion = &m.Conclusion
	}
	if m.Status != "" {
		ri.Status = &m.Status
	}
	return ri
}

// runDate is the run's day (YYYY-MM-DD) and creation time, as the site
// takes them from created_at; without one, today and its midnight.
func runDate(m schema.RunMeta, now time.Time) (date, timestamp string) {
	if m.CreatedAt.IsZero() {
		date = now.UTC().Format("2006-01-02")
		return date, date + "T00:00:00Z"
	}
	t := m.CreatedAt.UTC()
	return t.Format("2006-01-02"), t.Format(time.RFC3339)
}
