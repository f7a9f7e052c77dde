// Package traces is the traces stage: every AgentX row paired with its raw
// sibling, each distinct trace and server log stored once with its derived
// payloads, rows linked to them.
package traces

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/trace"
	"github.com/inferencex/ingest/schema"
)

// Writer is what the traces stage needs from the run's transaction.
// The stage costs at most five round trips whatever the run's size: find
// the rows of the paired points, ask which digests are stored, create the
// staging table and COPY every new chunk into it, one batch that writes
// the rest. The run's points come from the benchmark stage's ranking
// (Env.Points).
type Writer interface {
	TraceRowLinks(ctx context.Context, digests [][]byte, metricKeys, ownedKeys []string) (map[string]schema.TraceRowLink, error)
	KnownTraceDigests(ctx context.Context, sidecars, logs, blobs, texts [][]byte, v schema.TracePayloadVersions,
		perSource [][]byte) (schema.TraceKnown, error)
	StageTraceChunks(ctx context.Context, next func() (schema.TraceChunk, bool, error)) (int64, error)
	ApplyTraces(ctx context.Context, a schema.TraceApply) (schema.TraceApplyResult, error)
}

// payloadVersions are the versions of the payloads this build writes.
var payloadVersions = schema.TracePayloadVersions{Stats: trace.AggregateStatsVersion, Chart: trace.ChartSeriesVersion,
	Timeline: trace.RequestTimelineVersion}

// maxTraceNotes bounds the notes naming skipped traces.
const maxTraceNotes = 20

// maxTraceWorkers bounds the traces read at once in the second pass; each
// holds one profile's records and a compressor.
const maxTraceWorkers = 2

// Run is the traces stage: it pairs every AgentX row with its raw sibling
// agentic_<suffix>, stores each distinct trace once (content digest) with
// its derived payloads, links rows to traces and to their server logs,
// writes trace-derived metrics back, and records the run's dataset. Report
// unit: one AgentX row. It returns what it counted, for the summary.
func Run(ctx context.Context, w Writer, env *runstate.Env) (schema.Counters, error) {
	st := &traceStage{env: env, raws: byName(env.Plan.Artifacts(runstate.KindAgenticRaw)), logs: byName(env.Plan.Artifacts(runstate.KindServerLogs)),
		sidecars: map[string]*sidecarJob{}, logJobs: map[string]*logJob{}}
	err := st.run(ctx, w)
	return st.counts, err
}

func (st *traceStage) run(ctx context.Context, w Writer) error {
	env := st.env
	started := time.Now()
	rows := env.AgentX
	dataset, err := rows.Dataset(env.Start.Run.SourceRunID)
	if err != nil {
		return err
	}
	var datasetRow *schema.DatasetRow
	if dataset != "" {
		d, known, err := catalog.LookupDataset(dataset)
		if err != nil {
			return fmt.Errorf("dataset list: %w", err)
		}
		if !known {
			env.Tally.AddUnmapped("dataset", dataset)
		} else {
			datasetRow = &schema.DatasetRow{ID: d.ID, Slug: d.Slug, Label: d.Label, Variant: d.VariantName(),
				Description: d.Description, HFURL: d.HFURL(), License: d.License}
		}
	}
	counts := &st.counts.Rows.Trace
	counts.Unmapped += rows.Unmapped

	for _, p := range env.Points {
		st.pair(p)
	}
	st.noteSkipped()
	if err := st.resolveRows(ctx, w); err != nil {
		return err
	}
	st.pointContexts()
	passStarted := time.Now()
	env.Deps.Expect("traces hashed", int64(len(st.sidecarOrder)+len(st.logOrder)))
	st.firstPass()
	env.Log.Debug("traces hashed", zap.Int("sidecars", len(st.sidecarOrder)), zap.Int("server_logs", len(st.logOrder)),
		zap.Duration("took", time.Since(passStarted)))
	var sd, ld, bd, td, ps [][]byte
	for _, j := range st.sidecarOrder {
		if j.failed == "" {
			j.matchAdopted(st.rows)
			sd = append(sd, j.digest)
			if j.point.PerSource() {
				ps = append(ps, j.digest)
			}
			for _, d := range j.parts {
				if d != nil {
					bd = append(bd, d.sha)
				}
			}
		}
	}
	for _, j := range st.logOrder {
		if j.failed == "" {
			ld = append(ld, j.digest)
			for _, d := range j.files {
				if trace.IsLogFile(d.path) {
					td = append(td, d.sha)
				}
			}
		}
	}
	known := schema.TraceKnown{Sidecars: map[string]bool{}, ServerLogs: map[string]bool{}, Blobs: map[string]bool{}, Stale: map[string]bool{}, LogTexts: map[string]bool{}}
	if len(sd)+len(ld) > 0 {
		if known, err = w.KnownTraceDigests(ctx, sd, ld, bd, td, payloadVersions, ps); err != nil {
			return err
		}
	}
	for _, j := range st.sidecarOrder {
		j.known = known.Sidecars[string(j.digest)]
		// A sidecar stored by an older build is read again for its
		// payloads (its files are stored: none is sent again).
		j.stale = j.known && known.Stale[string(j.digest)]
	}
	for _, j := range st.logOrder {
		j.known = known.ServerLogs[string(j.digest)]
	}
	passStarted = time.Now()
	if err := st.secondPass(ctx, w, known); err != nil {
		return err
	}
	env.Log.Debug("traces streamed", zap.Duration("took", time.Since(passStarted)))
	passStarted = time.Now()
	apply := st.build(dataset)
	apply.DatasetRow = datasetRow
	if err := st.serverMetrics(&apply); err != nil {
		return err
	}
	res, err := w.ApplyTraces(ctx, apply)
	if err != nil {
		return err
	}
	env.Log.Debug("traces applied", zap.Duration("took", time.Since(passStarted)))
	st.count(counts)
	d := &st.counts.Details
	d.TraceRowsRead += int64(len(st.items)) + rows.Unmapped
	d.TraceSidecarsNew += res.SidecarsNew
	if res.SidecarsRefreshed > 0 {
		env.Tally.WriteNote(fmt.Sprintf("%d stored trace(s) held derived payloads of an older build: recomputed (aggregate_stats v%d, chart_series v%d, request_timeline v%d)",
			res.SidecarsRefreshed, trace.AggregateStatsVersion, trace.ChartSeriesVersion, trace.RequestTimelineVersion))
	}
	d.TraceBlobsNew += res.BlobsNew
	d.TraceBlobBytesNew += res.BlobBytesNew
	d.ServerLogsNew += res.ServerLogsNew
	d.ServerLogRowsLinked += res.ServerLogRowsLinked
	d.ServerMetricRowsUpdated += res.ServerMetricRowsUpdated
	if res.RowsLinked != counts.New {
		env.Log.Warn("trace links differ from the rows counted new", zap.Int64("linked", res.RowsLinked), zap.Int64("new", counts.New))
	}
	env.Log.Info("traces written", zap.Int64("trace_new", counts.New), zap.Int64("trace_duplicate", counts.Duplicate),
		zap.Int64("sidecars_new", res.SidecarsNew), zap.Int64("blobs_new", res.BlobsNew), zap.Int64("blob_bytes_new", res.BlobBytesNew),
		zap.Int64("server_logs_new", res.ServerLogsNew), zap.Int64("metrics_updated", res.MetricsUpdated),
		zap.String("dataset", dataset), zap.Duration("took", time.Since(started)))
	return nil
}

// traceStage holds the work of one run's traces stage.
type traceStage struct {
	env *runstate.Env
	// counts are the stage's counters, returned by Run.
	counts       schema.Counters
	raws, logs   map[string]*source.Artifact
	sidecars     map[string]*sidecarJob
	sidecarOrder []*sidecarJob
	logJobs      map[string]*logJob
	logOrder     []*logJob
	// items are the AgentX rows in point order, with what became of them.
	items   []traceItem
	skipped []string
	// rows are the stored rows of the paired points, by row id.
	rows map[int64]schema.TraceRowLink
}

type traceItem struct {
	point  schema.TracePoint
	job    *sidecarJob // nil when skipped or failed before pairing
	failed string      // a failure found while pairing
	art    string
	logged bool // a server log artifact pairs the point
}

// fromMemory reports whether the item's server metrics derive from what
// the benchmarks stage wrote, without reading the row back: it wrote the
// row now, and neither a scrape nor a server log adds to the row alone.
func (it traceItem) fromMemory() bool {
	return it.job == nil && !it.logged && it.point.Written != nil
}

// byName keeps the newest upload of each name (the plan lists same-name
// re-uploads newest first).
func byName(arts []*source.Artifact) map[string]*source.Artifact {
	m := make(map[string]*source.Artifact, len(arts))
	for _, a := range arts {
		if _, ok := m[a.Name]; !ok {
			m[a.Name] = a
		}
	}
	return m
}

// resolveRows fills in the stored row and current links of every paired
// point (one round trip, none when nothing was paired).
func (s *traceStage) resolveRows(ctx context.Context, w Writer) error {
	var digests [][]byte
	for _, j := range s.sidecarOrder {
		for _, p := range j.rows {
			digests = append(digests, p.Digest)
		}
	}
	for _, j := range s.logOrder {
		for _, p := range j.rows {
			digests = append(digests, p.Digest)
		}
	}
	for _, it := range s.items {
		if it.job == nil && !it.fromMemory() {
			digests = append(digests, it.point.Digest) // its server metrics are derived all the same
		}
	}
	if len(digests) == 0 {
		return nil
	}
	links, err := w.TraceRowLinks(ctx, digests, trace.ServerMetricInputs(), trace.ServerMetricsReplaced())
	if err != nil {
		return err
	}
	s.rows = make(map[int64]schema.TraceRowLink, len(links))
	for _, l := range links {
		s.rows[l.RowID] = l
	}
	fill := func(p *schema.TracePoint) error {
		l, ok := links[string(p.Digest)]
		if !ok {
			return fmt.Errorf("the winning row of %s/%s is not stored", p.Artifact, p.File)
		}
		p.RowID, p.TraceDigest, p.ServerLogDigest = l.RowID, l.TraceDigest, l.ServerLogDigest
		return nil
	}
	for _, j := range s.sidecarOrder {
		for i := range j.rows {
			if err := fill(&j.rows[i]); err != nil {
				return err
			}
		}
	}
	for _, j := range s.logOrder {
		for i := range j.rows {
			if err := fill(&j.rows[i]); err != nil {
				return err
			}
		}
	}
	for i := range s.items {
		if s.items[i].fromMemory() {
			continue
		}
		if err := fill(&s.items[i].point); err != nil {
			return err
		}
	}
	return nil
}

// pair finds the raw sibling and server log of one written point.
func (s *traceStage) pair(p schema.TracePoint) {
	logged := !p.IsAggregate && s.pairServerLog(p)
	if p.BenchmarkType != "agentic_traces" {
		return
	}
	item := traceItem{point: p, logged: logged}
	defer func() { s.items = append(s.items, item) }()
	rawName, ok := trace.RawSiblingName(p.Artifact)
	if p.IsAggregate || !ok {
		s.skipped = append(s.skipped, fmt.Sprintf("the winning copy of an AgentX point is in %s, which names no raw sibling", p.Artifact))
		return
	}
	raw := s.raws[rawName]
	if raw == nil {
		s.skipped = append(s.skipped, "missing sibling artifact "+rawName)
		return
	}
	item.art = raw.Name
	if err := raw.Load(); err != nil { // indexes the files, opens nothing
		item.failed = err.Error()
		return
	}
	files, ok := trace.Locate(raw.Files, trace.ConcOfFile(p.File))
	if !ok {
		item.failed = "no " + trace.ProfileExport + " under aiperf_artifacts/ or trace_replay/"
		if c := trace.ConcOfFile(p.File); c > 0 {
			item.failed += fmt.Sprintf(" (looked in conc_%d/ and the artifact root)", c)
		}
		return
	}
	key := raw.Name + "\x00" + files.Dir
	j := s.sidecars[key]
	if j == nil {
		j = &sidecarJob{raw: raw, files: files}
		s.sidecars[key] = j
		s.sidecarOrder = append(s.sidecarOrder, j)
	}
	j.rows = append(j.rows, p)
	item.job = j
}

// pairServerLog adds the point to the job of its server log artifact, if
// the run has one.
func (s *traceStage) pairServerLog(p schema.TracePoint) bool {
	key, ok := trace.ServerLogKey(p.Artifact)
	if !ok {
		return false
	}
	a := s.logs["server_logs_"+key]
	if a == nil {
		a = s.logs["multinode_server_logs_"+key]
	}
	if a == nil {
		return false
	}
	j := s.logJobs[a.Name]
	if j == nil {
		j = &logJob{art: a}
		s.logJobs[a.Name] = j
		s.logOrder = append(s.logOrder, j)
	}
	j.rows = append(j.rows, p)
	return true
}

func (s *traceStage) noteSkipped() {
	for i, n := range s.skipped {
		if i == maxTraceNotes {
			s.env.Tally.Note(fmt.Sprintf("… and %d more AgentX rows without a raw trace", len(s.skipped)-maxTraceNotes))
			break
		}
		s.env.Tally.Note("trace skipped: " + n)
	}
}

// firstPass hashes every paired file, so stored traces and logs are
// recognised before anything is compressed or sent.
func (s *traceStage) firstPass() {
	// One group per artifact: its files are hashed in path order by one
	// worker, so its ledger record does not depend on scheduling.
	type group struct {
		art  *source.Artifact
		rec  *runstate.Record
		jobs []func(*runstate.Record)
	}
	var groups []*group
	byArt := map[*source.Artifact]*group{}
	add := func(a *source.Artifact, job func(*runstate.Record)) {
		g := byArt[a]
		if g == nil {
			g = &group{art: a, rec: runstate.NewRecord(a)}
			byArt[a] = g
			groups = append(groups, g)
			*s.env.Records = append(*s.env.Records, g.rec)
			s.counts.Details.ArtifactsRead++
		}
		g.jobs = append(g.jobs, job)
	}
	for _, j := range s.sidecarOrder {
		add(j.raw, j.hash)
	}
	for _, j := range s.logOrder {
		add(j.art, j.hash)
	}
	work := make(chan *group)
	var wg sync.WaitGroup
	for range min(maxTraceWorkers, runtime.GOMAXPROCS(0), len(groups)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range work {
				for _, job := range g.jobs {
					job(g.rec)
					s.env.Deps.Advance(1)
				}
				if err := g.art.Release(); err != nil {
					s.env.Log.Debug("release artifact", zap.String("artifact", g.art.Name), zap.Error(err))
				}
			}
		}()
	}
	for _, g := range groups {
		work <- g
	}
	close(work)
	wg.Wait()
	for _, g := range groups {
		s.counts.Details.FilesRead += int64(g.rec.FilesRead)
		s.counts.Details.BytesRead += g.rec.BytesRead
	}
}

// secondPass streams every sidecar and server log not stored yet through
// one COPY.
func (s *traceStage) secondPass(ctx context.Context, w Writer, known schema.TraceKnown) error {
	var todoS []*sidecarJob
	var todoL []*logJob
	for _, j := range s.sidecarOrder {
		if j.failed == "" && (!j.known || j.stale) {
			todoS = append(todoS, j)
		}
	}
	for _, j := range s.logOrder {
		if j.failed == "" && !j.known {
			todoL = append(todoL, j)
		}
	}
	if len(todoS)+len(todoL) == 0 {
		return nil
	}
	s.env.Deps.Expect("traces stored", int64(len(todoS)+len(todoL)))
	// Several jobs can read one artifact (a multinode raw tree holds every
	// concurrency's conc_<N>/): the artifact is released when its last job
	// ends, never under another job still reading it.
	users := map[*source.Artifact]*atomic.Int32{}
	use := func(a *source.Artifact) {
		if users[a] == nil {
			users[a] = &atomic.Int32{}
		}
		users[a].Add(1)
	}
	for _, j := range todoS {
		use(j.raw)
	}
	for _, j := range todoL {
		use(j.art)
	}
	done1 := func(a *source.Artifact) {
		if users[a].Add(-1) == 0 {
			if err := a.Release(); err != nil {
				s.env.Log.Debug("release artifact", zap.String("artifact", a.Name), zap.Error(err))
			}
		}
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chunks := make(chan schema.TraceChunk, chunkQueue)
	done := make(chan struct{})
	// A few workers read different traces at once; their chunks share the
	// one COPY (each stream has its own id).
	work := make(chan func(*streamer))
	var ids atomic.Int32
	var wg sync.WaitGroup
	for range min(maxTraceWorkers, runtime.GOMAXPROCS(0), len(todoS)+len(todoL)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &streamer{ctx: ctx, out: chunks, ids: &ids, log: s.env.Log}
			for job := range work {
				job(st)
			}
		}()
	}
	go func() {
		defer close(done)
		defer close(chunks)
		defer wg.Wait()
		defer close(work)
		// Every job is handed out, so every artifact is released; a job
		// of a cancelled run does nothing but that.
		for _, j := range todoS {
			work <- func(st *streamer) {
				defer done1(j.raw)
				if ctx.Err() == nil {
					st.sidecar(j, known)
					s.env.Deps.Advance(1)
				}
			}
		}
		for _, j := range todoL {
			work <- func(st *streamer) {
				defer done1(j.art)
				if ctx.Err() == nil {
					st.serverLog(j, known)
					s.env.Deps.Advance(1)
				}
			}
		}
	}()
	_, copyErr := w.StageTraceChunks(ctx, func() (schema.TraceChunk, bool, error) {
		select {
		case c, ok := <-chunks:
			return c, ok, nil
		case <-ctx.Done():
			return schema.TraceChunk{}, false, ctx.Err()
		}
	})
	cancel()
	<-done
	if err := parent.Err(); err != nil {
		return err // cancelled: say so, whatever the COPY answered
	}
	if copyErr != nil {
		return copyErr
	}
	return nil
}

// build assembles the batch from the jobs' outcomes.
func (s *traceStage) build(dataset string) schema.TraceApply {
	a := schema.TraceApply{Dataset: dataset}
	addBlob := func(d *fileDigest) {
		if d != nil && d.send {
			a.Blobs = append(a.Blobs, schema.TraceBlob{Stream: d.stream, Digest: d.sha, Size: d.size, StoredSize: d.stored, Chunks: d.chunks})
		}
	}
	opt := func(d *fileDigest) []byte {
		if d == nil {
			return nil
		}
		return d.sha
	}
	for _, j := range s.sidecarOrder {
		if j.failed != "" {
			s.env.Tally.Fail(schema.CategoryTrace, j.raw.Name, j.failFile, j.failed)
			continue
		}
		if j.metricsProblem != "" {
			// The trace itself is fine and its rows are linked: the
			// unreadable export is a failure of the run, not of the rows.
			s.env.Tally.Fail(schema.CategoryRun, j.raw.Name, j.parts[2].path,
				"server metrics export unreadable, trace stored without server-side series: "+j.metricsProblem)
		}
		if !j.known {
			for _, d := range j.parts {
				addBlob(d)
			}
			dm, _ := json.Marshal(j.derived.Metrics)
			sc := schema.TraceSidecar{Digest: j.digest, Profile: j.parts[0].sha, ProfileSize: j.parts[0].size,
				AIPerfJSON: opt(j.parts[1]), MetricsJSON: opt(j.parts[2]), MetricsCSV: opt(j.parts[3]),
				Layout: j.files.Layout, StatsStream: j.streams[0], ChartStream: j.streams[1], TimelineStream: j.streams[2],
				DerivedMetrics: dm, KVCapacity: j.derived.KVCapacity, SourceArtifact: j.raw.Name, SourceDir: j.files.Dir}
			if j.parts[2] != nil {
				sc.MetricsJSONSize = j.parts[2].size
			}
			if j.parts[3] != nil {
				sc.MetricsCSVSize = j.parts[3].size
			}
			a.Sidecars = append(a.Sidecars, sc)
		} else if j.stale {
			dm, _ := json.Marshal(j.derived.Metrics)
			a.Refreshes = append(a.Refreshes, schema.TraceSidecar{Digest: j.digest, StatsStream: j.streams[0], ChartStream: j.streams[1],
				TimelineStream: j.streams[2], DerivedMetrics: dm, KVCapacity: j.derived.KVCapacity})
		}
		for _, p := range j.rows {
			if !sameDigest(p.TraceDigest, j.digest) {
				a.TraceLinks = append(a.TraceLinks, schema.RowLink{RowID: p.RowID, Digest: j.digest})
			}
		}
	}
	for _, it := range s.items {
		if it.failed != "" {
			s.env.Tally.Fail(schema.CategoryTrace, it.art, "", it.failed)
		}
	}
	for _, j := range s.logOrder {
		if j.failed != "" {
			s.env.Tally.Fail(schema.CategoryRun, j.art.Name, j.failFile, "server log: "+j.failed)
			continue
		}
		if !j.known && len(j.stored) == 0 {
			// Nothing in it is a log (.log, .out): as with the reference,
			// no server log is stored or linked.
			s.env.Log.Warn("server log artifact holds no log file (.log, .out): nothing stored",
				zap.String("artifact", j.art.Name))
			continue
		}
		if !j.known {
			b := schema.ServerLogBundle{Digest: j.digest, Primary: primaryLog(j.stored), KVCapacity: j.kv, SourceArtifact: j.art.Name}
			for _, d := range j.stored {
				if d.send {
					a.LogTexts = append(a.LogTexts, schema.ServerLogText{Stream: d.stream, Digest: d.sha, Size: d.size})
				}
				b.Files = append(b.Files, schema.ServerLogFile{Name: d.path, Text: d.sha, Size: d.size})
				b.TotalSize += d.size
			}
			a.Logs = append(a.Logs, b)
		}
		for _, p := range j.rows {
			if !sameDigest(p.ServerLogDigest, j.digest) {
				a.LogLinks = append(a.LogLinks, schema.RowLink{RowID: p.RowID, Digest: j.digest})
			}
		}
	}
	return a
}

// count puts every AgentX row in exactly one column.
func (s *traceStage) count(c *schema.Counts) {
	for _, it := range s.items {
		switch {
		case it.failed != "":
			c.Failed++
		case it.job == nil:
			c.Skipped++
		case it.job.failed != "":
			c.Failed++
		case sameDigest(it.point.TraceDigest, it.job.digest):
			c.Duplicate++
		default:
			c.New++
		}
	}
}
