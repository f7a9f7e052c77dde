package ingest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/trace"
)

// agentxRows is what the traces stage learns from the AgentX benchmark
// files themselves: the dataset each row replayed and how many rows were
// unmapped (their trace cannot be linked).
type agentxRows struct {
	unmapped int64
	// datasets maps a slug to the first artifact/file naming it.
	datasets map[string]string
}

// readAgentXRows reads the per-job bmk_agentic_* files again (they are one
// small object per file) for what the benchmark stage does not keep.
func readAgentXRows(env *runEnv) agentxRows {
	out := agentxRows{datasets: map[string]string{}}
	reader := benchmark.NewReader()
	for _, pa := range env.plan.benchmark {
		a := pa.artifact
		if pa.aggregate || !strings.HasPrefix(a.Name, "bmk_agentic_") {
			continue
		}
		fsys, err := a.FS()
		if err != nil {
			continue // the benchmark stage reported it
		}
		for _, file := range jsonFiles(a) {
			f, err := fsys.Open(file)
			if err != nil {
				continue
			}
			_, _ = reader.ReadElements(f, benchmark.ObjectOrArray, func(e *benchmark.Element) error {
				row, err := e.Decode()
				if err != nil {
					return nil
				}
				if slug, ok := trace.DatasetSlug(row); ok {
					if _, seen := out.datasets[slug]; !seen {
						out.datasets[slug] = a.Name + "/" + file
					}
				}
				if _, o := env.deps.Normalizer.Normalize(row); o.Kind == benchmark.Unmapped {
					out.unmapped++
				}
				return nil
			})
			f.Close()
		}
		a.Release()
	}
	return out
}

// runDataset is the run's one dataset slug ("" when no row names one); two
// different slugs are an error that aborts the ingest.
func (r agentxRows) runDataset(runID int64) (string, error) {
	if len(r.datasets) == 0 {
		return "", nil
	}
	slugs := make([]string, 0, len(r.datasets))
	for s := range r.datasets {
		slugs = append(slugs, s)
	}
	sort.Strings(slugs)
	if len(slugs) > 1 {
		return "", fmt.Errorf("conflicting dataset provenance in workflow run %d: %q (%s) and %q (%s); one run replays one dataset",
			runID, slugs[0], r.datasets[slugs[0]], slugs[1], r.datasets[slugs[1]])
	}
	return slugs[0], nil
}
