package ingest_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest"
)

// stageCounts is what a stage told the progress.
type stageCounts struct {
	name  string
	unit  string
	total int64
	adds  []int64 // each Add's n
	done  int64
	ended bool
	// phases are the counts before the last Expect of another unit.
	phases []stageCounts
}

// recordingProgress keeps every call the pipeline and stages make.
type recordingProgress struct {
	mu     sync.Mutex
	t      *testing.T
	stages []*stageCounts
}

func (p *recordingProgress) current() *stageCounts {
	require.NotEmpty(p.t, p.stages, "a count outside any stage")
	s := p.stages[len(p.stages)-1]
	require.False(p.t, s.ended, "a count after stage %s ended", s.name)
	return s
}

func (p *recordingProgress) Start(stage string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.stages); n > 0 {
		require.True(p.t, p.stages[n-1].ended, "stage %s started before %s ended", stage, p.stages[n-1].name)
	}
	p.stages = append(p.stages, &stageCounts{name: stage})
}

func (p *recordingProgress) Expect(unit string, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.current()
	if s.unit != "" && unit != s.unit {
		s.phases = append(s.phases, stageCounts{unit: s.unit, total: s.total, done: s.done})
		s.done = 0
	}
	s.unit, s.total = unit, total
}

func (p *recordingProgress) Add(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.current()
	s.adds = append(s.adds, n)
	s.done += n
}

func (p *recordingProgress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current().ended = true
}

var _ ingest.Progress = (*recordingProgress)(nil)

// TestProgressOfDemoIngest: every stage of the demo's first ingest starts
// and ends in order, counts only upwards (each Add is positive, so the
// count grows monotonically), and ends on the report's counters: the
// benchmark files read, the eval samples files read (of as many
// expected), the traces hashed then those stored (each of as many
// expected), the telemetry series stored (of the series its files
// announced: the demo's failing file is announced and not stored).
func TestProgressOfDemoIngest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := &recordingProgress{t: t}
	e.deps.Progress = p
	sum := e.mustIngest(demoTree(t), ingest.Config{})

	var names []string
	byName := map[string]*stageCounts{}
	for _, s := range p.stages {
		names = append(names, s.name)
		byName[s.name] = s
		require.True(t, s.ended, "stage %s ended", s.name)
		for _, n := range s.adds {
			require.Positive(t, n, "stage %s counts upwards", s.name)
		}
	}
	require.Equal(t, []string{"benchmarks", "evals", "traces", "telemetry", "changelog", "curves", "impact", "commit"}, names)

	b := byName["benchmarks"]
	require.Equal(t, "files", b.unit)
	require.Zero(t, b.total, "the benchmark files are not known before their artifacts are open")
	require.Positive(t, sum.Stats.BenchmarkFiles)
	require.Equal(t, sum.Stats.BenchmarkFiles, b.done)

	ev := byName["evals"]
	require.Equal(t, "samples files", ev.unit)
	require.Positive(t, sum.Details.EvalSampleFiles)
	require.Equal(t, sum.Details.EvalSampleFiles, ev.total)
	require.Equal(t, sum.Details.EvalSampleFiles, ev.done)

	tr := byName["traces"]
	require.Len(t, tr.phases, 1, "the traces stage hashes, then stores")
	hashed := tr.phases[0]
	require.Equal(t, "traces hashed", hashed.unit)
	require.Positive(t, hashed.total)
	require.Equal(t, hashed.total, hashed.done, "every paired trace and server log is hashed")
	require.Equal(t, "traces stored", tr.unit)
	require.Equal(t, tr.total, tr.done, "every new trace and server log is stored")
	require.Equal(t, hashed.total, tr.total, "a first ingest stores every trace it hashed")
	require.Positive(t, sum.Details.TraceSidecarsNew+sum.Details.ServerLogsNew)

	tel := byName["telemetry"]
	require.Equal(t, "series", tel.unit)
	require.EqualValues(t, 7, sum.Rows.Power.New)
	require.Equal(t, sum.Rows.Power.New, tel.done)
	require.Equal(t, sum.Rows.Power.New+sum.Rows.Power.Failed, tel.total)

	// Read again in full: every trace is hashed and found stored, none is
	// stored again.
	again := &recordingProgress{t: t}
	e.deps.Progress = again
	e.mustIngest(demoTree(t), ingest.Config{Reread: true})
	for _, s := range again.stages {
		if s.name != "traces" {
			continue
		}
		require.Empty(t, s.phases, "nothing to store: no second phase")
		require.Equal(t, "traces hashed", s.unit)
		require.Equal(t, hashed.total, s.total)
		require.Equal(t, s.total, s.done)
		return
	}
	t.Fatal("the reread ran no traces stage")
}
