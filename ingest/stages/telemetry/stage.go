package telemetry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/semaphore"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/source"
	tel "github.com/inferencex/ingest/ingest/telemetry"
	"github.com/inferencex/ingest/schema"
)

// powerTolerance is the relative difference between published and
// measured power (or energy) beyond which the report warns.
const powerTolerance = 0.05

// seriesJob is one telemetry file linked to written benchmark points.
type seriesJob struct {
	src    *telemetrySource
	file   telemetryFile
	points []tel.RunPoint
	// set by the hash pass
	digest []byte
	offset time.Duration
	window *tel.Window
	hosts  []string
	// zipKnown: the file lives in a zip whose digest identifies it, so
	// the hash pass did not read it (a DCGM bundle's hosts then come from
	// its stored series, or from a scan when it must be parsed).
	zipKnown bool
	stored   []tel.StoredSeries
	size     int64
	// fileSum is the file's sha256 when the hash pass read it (not
	// zipKnown).
	fileSum [sha256.Size]byte
	// readErr is set when the file could not be read in the hash pass, or
	// a zipped DCGM bundle's hosts could not be scanned.
	readErr string
	// side is the file's sidecars (read by the hash pass, in the digest);
	// vendor, for a DCGM bundle, the vendor its manifest names.
	side   *sidecars
	vendor tel.Vendor
	// csvSum is the hex sha256 of the file's bytes, once read.
	csvSum string
}

// items is how many report items the job stands for: one per series (a
// DCGM bundle holds one per host).
func (j *seriesJob) items() int64 {
	if j.file.dcgm && len(j.hosts) > 0 {
		return int64(len(j.hosts))
	}
	return 1
}

type telemetryStage struct {
	env *runstate.Env
	// counts are the stage's counters, returned by Run.
	counts *schema.Counters
	state  tel.RunState
	points map[string][]tel.RunPoint // by source artifact
	stored map[string][]tel.StoredSeries
	bmk    map[string]*source.Artifact
	jobs   []*seriesJob
	fresh  []*seriesJob // jobs whose series are new or changed
	mu     sync.Mutex   // guards open
	open   map[*source.Artifact]bool
	recs   map[*source.Artifact]*runstate.Record
	ids    []int64
	// results
	rows    []tel.SeriesRow
	rowSide []rowSidecars // of rows, by index
	// unchangedSeries are the stored series of files read unchanged, by
	// artifact (the series inventory of their artifact's new series)
	unchangedSeries map[string][]tel.StoredSeries
	// cpu are the CPU-side samples of the power bundles read
	cpu      []cpuFile
	links    []tel.Link
	replace  []int64
	samples  int64
	measured map[int64]bool // benchmark ids with a stored series
	warnings []schema.PowerWarning
}

func newTelemetryStage(env *runstate.Env, state tel.RunState, counts *schema.Counters) *telemetryStage {
	st := &telemetryStage{env: env, counts: counts, state: state, points: map[string][]tel.RunPoint{},
		stored: map[string][]tel.StoredSeries{}, bmk: map[string]*source.Artifact{},
		open: map[*source.Artifact]bool{}, recs: map[*source.Artifact]*runstate.Record{}, measured: map[int64]bool{},
		unchangedSeries: map[string][]tel.StoredSeries{}}
	for _, p := range state.Points {
		st.points[p.SourceArtifact] = append(st.points[p.SourceArtifact], p)
	}
	for _, s := range state.Series {
		file, _, _ := strings.Cut(s.File, "#")
		k := s.Artifact + "\x00" + file
		st.stored[k] = append(st.stored[k], s)
	}
	for _, pa := range env.Plan.Benchmark {
		if !pa.Aggregate {
			st.bmk[pa.Artifact.Name] = pa.Artifact
		}
	}
	return st
}

func (st *telemetryStage) fail(artifact, file, reason string, items int64) {
	st.counts.Rows.Power.Failed += items
	st.env.Tally.Fail(schema.CategoryPower, artifact, file, reason)
}

func (st *telemetryStage) record(a *source.Artifact) *runstate.Record {
	r := st.recs[a]
	if r == nil {
		r = runstate.NewRecord(a)
		st.recs[a] = r
		*st.env.Records = append(*st.env.Records, r)
		st.counts.Details.ArtifactsRead++
	}
	return r
}

func (st *telemetryStage) fsOf(a *source.Artifact) (fs.FS, error) {
	fsys, err := a.FS()
	if err == nil {
		st.mu.Lock()
		st.open[a] = true
		st.mu.Unlock()
	}
	return fsys, err
}

// releaseOpen closes every artifact the stage opened (a run holds
// thousands: none stays open longer than its pass needs).
func (st *telemetryStage) releaseOpen() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for a := range st.open {
		st.closeArtifact(a)
	}
	st.open = map[*source.Artifact]bool{}
}

// closeArtifact releases an artifact the stage opened; st.mu is held.
func (st *telemetryStage) closeArtifact(a *source.Artifact) {
	if err := a.Release(); err != nil {
		st.env.Log.Debug("release telemetry artifact", zap.String("artifact", a.Name), zap.Error(err))
	}
}

func (st *telemetryStage) releaseArtifacts() {
	st.releaseOpen()
	for _, r := range st.recs {
		r.Seal()
	}
}

// plan attaches a source's files to the points its benchmark artifact
// wrote, and counts the files whose point was not written. A
// gpu_metrics_/power_audit_ artifact without a written point is counted
// as one skipped (or unmapped) item and not opened; an agentic_ sibling
// is a source only when it holds telemetry files.
func (st *telemetryStage) plan(src *telemetrySource) {
	a := src.artifact
	var points []tel.RunPoint
	bmkNames := []string{"bmk_" + src.suffix, "bmk_agentic_" + src.suffix}
	for _, n := range bmkNames {
		points = append(points, st.points[n]...)
	}
	notWritten := func() {
		st.counts.Details.PowerSeriesRead++
		if st.pointUnmapped(bmkNames) {
			st.counts.Rows.Power.Unmapped++
		} else {
			st.counts.Rows.Power.Skipped++
		}
	}
	if len(points) == 0 && src.kind != runstate.KindAgenticRaw {
		notWritten()
		return
	}
	if err := a.Load(); err != nil {
		if src.kind != runstate.KindAgenticRaw { // the trace stage reports an agentic_ artifact it cannot open
			st.record(a)
			st.counts.Details.PowerSeriesRead++
			st.fail(a.Name, "", err.Error(), 1)
		}
		return
	}
	if src.kind == runstate.KindPowerAudit {
		st.planCPU(a)
	}
	for _, f := range telemetryFiles(a) {
		linked := points
		if n := concDir(f.path); n > 0 {
			linked = nil
			for _, p := range points {
				if p.Conc == n {
					linked = append(linked, p)
				}
			}
		}
		if len(linked) == 0 {
			notWritten()
			continue
		}
		st.jobs = append(st.jobs, &seriesJob{src: src, file: f, points: linked})
	}
}

// pointUnmapped says whether the benchmark artifact of a telemetry source
// holds a row that was unmapped. Such telemetry is rare (its point was not
// written), so the rows are read again rather than remembered for all.
func (st *telemetryStage) pointUnmapped(names []string) bool {
	for _, n := range names {
		a := st.bmk[n]
		if a == nil {
			continue
		}
		fsys, err := st.fsOf(a)
		if err != nil {
			continue
		}
		reader := benchmark.NewReader()
		unmapped := false
		files, _ := runstate.BenchmarkFiles(a)
		for _, file := range files {
			f, err := fsys.Open(file)
			if err != nil {
				continue
			}
			_, _ = reader.ReadElements(f, benchmark.ObjectOrArray, func(e *benchmark.Element) error {
				row, err := e.Decode()
				if err != nil {
					return nil
				}
				benchmark.FillISLOSLFromNames(row, file, a.Name)
				if _, out := st.env.Deps.Normalizer.Normalize(row); out.Kind == benchmark.Unmapped {
					unmapped = true
				}
				return nil
			})
			f.Close()
		}
		if unmapped {
			return true
		}
	}
	return false
}

// hashAll reads every linked file once, with a few workers: its digest
// (with the sidecars that change how it reads), time zone, window and, for
// DCGM, its hosts. A file whose stored series have the same digest is a
// duplicate: its samples are never read again. Outcomes are applied in job
// order, so the summary does not depend on scheduling.
func (st *telemetryStage) hashAll(ctx context.Context) error {
	jobs := make(chan *seriesJob)
	var wg sync.WaitGroup
	for range min(hashWorkers, max(len(st.jobs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, hashBufferSize)
			for j := range jobs {
				st.hash(j, buf)
			}
		}()
	}
feed:
	for _, j := range st.jobs {
		select {
		case jobs <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	st.releaseOpen()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, j := range st.jobs {
		a := j.src.artifact
		if j.readErr != "" {
			st.record(a)
			st.counts.Details.PowerSeriesRead++
			st.fail(a.Name, j.file.path, j.readErr, 1)
			continue
		}
		rec := st.record(a)
		st.counts.Details.PowerSeriesRead += j.items()
		if !j.zipKnown { // a zip's CSV is identified by the zip's digest, not read here
			rec.AddFile(j.file.path, j.fileSum, j.size)
			st.counts.Details.FilesRead++
			st.counts.Details.BytesRead += j.size
		}
		if st.unchanged(j) {
			st.counts.Rows.Power.Duplicate += int64(len(j.stored))
			st.unchangedSeries[a.Name] = append(st.unchangedSeries[a.Name], j.stored...)
			for _, s := range j.stored {
				for _, p := range j.points {
					st.links = append(st.links, tel.Link{BenchmarkID: p.ID, SeriesID: s.ID})
					st.measured[p.ID] = true
				}
				// The stored facts answer the power checks again, so a
				// rerun reports the same warnings.
				st.check(j, s.File, s.Vendor, s.Facts)
			}
			continue
		}
		st.fresh = append(st.fresh, j)
	}
	return nil
}

// hashWorkers read and hash telemetry files in parallel (the work is
// sha256 and read system calls).
const hashWorkers = 2

// hashBufferSize is each hash worker's read buffer: large reads, few
// system calls.
const hashBufferSize = 1 << 20

// hash reads one file through buf; safe for concurrent use on distinct
// jobs and buffers.
func (st *telemetryStage) hash(j *seriesJob, buf []byte) {
	a := j.src.artifact
	j.stored = st.storedOf(j)
	// The path names the series in the database (file_name).
	if why := tel.TextProblem(j.file.path); why != "" {
		j.readErr = "file name: " + why
		return
	}
	fsys, err := st.fsOf(a)
	if err != nil {
		j.readErr = err.Error()
		return
	}
	h := sha256.New()
	if a.Digest != "" {
		// A zip was hashed whole when the source indexed it (and checked
		// against the listing): its digest and the path identify the file
		// without reading it again.
		field(h, []byte("zip"))
		field(h, []byte(a.Digest))
		field(h, []byte(j.file.path))
		j.zipKnown = true
		st.digestSidecars(j, fsys, h)
		if j.file.dcgm {
			st.bundleHosts(j)
		}
		return
	}
	f, err := fsys.Open(j.file.path)
	if err != nil {
		j.readErr = fmt.Sprintf("cannot open: %v", err)
		return
	}
	defer f.Close()
	if j.file.dcgm {
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			var herr error
			j.hosts, herr = tel.DCGMHosts(pr)
			pr.CloseWithError(herr)
			done <- herr
		}()
		j.size, err = io.Copy(io.MultiWriter(h, pw), f)
		pw.CloseWithError(err)
		if herr := <-done; err == nil && herr != nil {
			err = herr
		}
	} else {
		j.size, err = io.CopyBuffer(h, struct{ io.Reader }{f}, buf)
	}
	if err != nil {
		j.readErr = fmt.Sprintf("read: %v", err)
		return
	}
	h.Sum(j.fileSum[:0])
	j.csvSum = hex.EncodeToString(j.fileSum[:])
	st.digestSidecars(j, fsys, h)
}

// digestSidecars finishes a job's digest: it covers what decides the
// stored samples, facts and sidecars besides the CSV bytes — the time-zone
// sidecar, the window and the sidecars document (a DCGM bundle's vendor
// comes from its manifest, in it).
func (st *telemetryStage) digestSidecars(j *seriesJob, fsys fs.FS, h hash.Hash) {
	a := j.src.artifact
	j.side = readSidecars(a, fsys, j.file, j.src.kind == runstate.KindPowerAudit)
	if j.file.dcgm {
		j.vendor = bundleVendor(j.side.context)
	}
	if doc, err := j.side.document(nil, nil); err == nil {
		field(h, []byte("sidecars"))
		field(h, doc)
	}
	if !j.file.dcgm {
		off, used, content := timeZoneSidecar(a, fsys, j.file.path)
		j.offset = off
		if used != "" {
			field(h, []byte(used))
			field(h, content)
		}
	}
	j.window = st.windowOf(j, fsys)
	if j.window != nil {
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], uint64(j.window.Start))
		binary.BigEndian.PutUint64(b[8:], uint64(j.window.End))
		field(h, b[:])
	}
	j.digest = h.Sum(nil)
}

func field(h io.Writer, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// windowOf is the benchmark window the facts integrate over: the power
// audit of the single point the file measures, else the validation
// document beside the file. A DCGM bundle spans many points: none.
func (st *telemetryStage) windowOf(j *seriesJob, fsys fs.FS) *tel.Window {
	if j.file.dcgm {
		return nil
	}
	if len(j.points) == 1 {
		p := j.points[0]
		if p.AuditWindowStart != nil && p.AuditWindowEnd != nil && *p.AuditWindowEnd > *p.AuditWindowStart {
			return &tel.Window{Start: secondsToMicros(*p.AuditWindowStart), End: secondsToMicros(*p.AuditWindowEnd), Source: "power_audit"}
		}
	}
	return validationWindow(j.src.artifact, fsys, j.file.path)
}

// storedAll: the file has stored series and every one is of the job's
// file (sameFile).
func storedAll(j *seriesJob) bool {
	if len(j.stored) == 0 {
		return false
	}
	for _, s := range j.stored {
		if !sameFile(s, j) {
			return false
		}
	}
	return true
}

// sameFile: stored series s was read from the job's file as it is. Ours
// carry the job's digest. One the reference ingest stored (adopted) has
// another digest: it stands when the CSV's sha256 is the reference's
// record of it, or when the file is in a zip the source identified whole
// (not read here): the run attempt's artifact is the one the reference
// read, so a rerun after adopt keeps the series the site shows.
func sameFile(s tel.StoredSeries, j *seriesJob) bool {
	if s.Adopted {
		return j.zipKnown || (j.csvSum != "" && s.CSVSha256 == j.csvSum)
	}
	return bytes.Equal(s.Digest, j.digest)
}

// storedOf is the series stored from a job's file.
func (st *telemetryStage) storedOf(j *seriesJob) []tel.StoredSeries {
	return st.stored[j.src.artifact.Name+"\x00"+j.file.path]
}

// bundleHosts sets the hosts of a DCGM bundle in a zip: its stored series
// when the zip is the one they were read from, else a scan of the file
// (it will be parsed). Run by the hash workers.
func (st *telemetryStage) bundleHosts(j *seriesJob) {
	if storedAll(j) {
		j.hosts = make([]string, len(j.stored))
	} else if err := st.scanHosts(j); err != nil {
		j.readErr = err.Error()
	}
}

// scanHosts reads a DCGM bundle the hash pass does not hash (it is in a
// zip) for its hosts: one series each.
func (st *telemetryStage) scanHosts(j *seriesJob) error {
	a := j.src.artifact
	fsys, err := st.fsOf(a)
	if err != nil {
		return err
	}
	f, err := fsys.Open(j.file.path)
	if err != nil {
		return fmt.Errorf("cannot open: %v", err)
	}
	defer f.Close()
	j.hosts, err = tel.DCGMHosts(f)
	return err
}

// unchanged: every stored series of the file carries the file's digest
// (and, for DCGM, the same hosts).
func (st *telemetryStage) unchanged(j *seriesJob) bool {
	if len(j.stored) == 0 || int64(len(j.stored)) != j.items() {
		return false
	}
	return storedAll(j)
}

func (st *telemetryStage) idsNeeded() int {
	n := 0
	for _, j := range st.fresh {
		n += int(j.items())
	}
	return n
}

// copyNew parses every new file and streams its samples into one COPY,
// series by series: the parse workers (parseAll) hand whole parsed series
// (a file that fails halfway sends nothing) to the store's encoder.
func (st *telemetryStage) copyNew(ctx context.Context, w Writer) (int64, error) {
	if len(st.fresh) == 0 {
		return 0, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan tel.SampleBatch, 4)
	parsed := make(chan error, 1)
	go func() { parsed <- st.parseAll(ctx, batches) }()
	n, copyErr := w.CopySamples(ctx, func() (tel.SampleBatch, bool, error) {
		select {
		case b, ok := <-batches:
			return b, ok, nil
		case <-ctx.Done():
			return tel.SampleBatch{}, false, ctx.Err()
		}
	})
	cancel()
	for b := range batches { // release what the COPY did not take
		b.Rec.Release()
	}
	parseErr := <-parsed
	if copyErr != nil {
		return n, copyErr
	}
	return n, parseErr
}

// parseAll parses the new files on parseWorkers goroutines and hands
// their series to out in the order of the jobs, so ids, rows and failures
// come out as from one parser. Files parsed or waiting to be sent are
// bounded by a budget (parseBudget); an artifact is released once its last
// job is sent.
func (st *telemetryStage) parseAll(ctx context.Context, out chan<- tel.SampleBatch) error {
	defer close(out)
	mem := telemetryAllocator(st.env.Deps)
	// A sample more than a day past the ingest's clock is impossible.
	notAfter := st.env.Deps.Now().Add(24 * time.Hour).UnixMicro()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	results := make([]chan parsedFile, len(st.fresh))
	remaining := map[*source.Artifact]int{}
	for i, j := range st.fresh {
		results[i] = make(chan parsedFile, 1)
		remaining[j.src.artifact]++
	}
	budget := newParseBudget()
	sizes := make([]int64, len(st.fresh))
	todo := make(chan int)
	var wg sync.WaitGroup
	for range min(parseWorkers, len(st.fresh)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range todo {
				results[i] <- st.parseFile(st.fresh[i], tel.Options{Mem: mem, UTCOffset: st.fresh[i].offset,
					Window: st.fresh[i].window, NotAfter: notAfter})
			}
		}()
	}
	go func() {
		defer close(todo)
		for i, j := range st.fresh {
			sizes[i] = st.inputSize(j)
			if budget.acquire(ctx, sizes[i]) != nil {
				return
			}
			select {
			case todo <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() {
		// On an early return: stop the feeder, let the workers finish and
		// release what they parsed and nobody sent.
		cancel()
		wg.Wait()
		for _, r := range results {
			select {
			case p := <-r:
				tel.ReleaseAll(p.series)
			default:
			}
		}
	}()

	next := 0
	for i, j := range st.fresh {
		var p parsedFile
		select {
		case p = <-results[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		err := st.sendFile(ctx, j, p, &next, out)
		budget.release(sizes[i])
		a := j.src.artifact
		if remaining[a]--; remaining[a] == 0 {
			st.release(a)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// parseWorkers parse telemetry files in parallel: parsing, not
// PostgreSQL, is the stage's limit since samples are stored as chunks.
const parseWorkers = 2

// parseBudgetBytes bounds the telemetry parsed and not yet sent, in file
// bytes: a file's series are held whole until sent (about twice its size
// in Arrow buffers and facts), so a second file is parsed alongside only
// while both fit. A file larger than the budget is parsed alone. A larger
// budget lets two large DCGM bundles be held at once, which costs far more
// peak memory than the time it saves (docs/performance.md, "Current
// figures").
const parseBudgetBytes = 32 << 20

// parseBudget admits files to the parse workers: at most parseWorkers at a
// time, and more than one only within parseBudgetBytes (a file weighs its
// size, at most the whole budget, so a larger one runs alone). One
// goroutine acquires, the sender releases.
type parseBudget struct {
	files, bytes *semaphore.Weighted
}

func newParseBudget() *parseBudget {
	return &parseBudget{files: semaphore.NewWeighted(parseWorkers), bytes: semaphore.NewWeighted(parseBudgetBytes)}
}

func (b *parseBudget) acquire(ctx context.Context, size int64) error {
	if err := b.files.Acquire(ctx, 1); err != nil {
		return err
	}
	if err := b.bytes.Acquire(ctx, min(size, parseBudgetBytes)); err != nil {
		b.files.Release(1)
		return err
	}
	return nil
}

func (b *parseBudget) release(size int64) {
	b.bytes.Release(min(size, parseBudgetBytes))
	b.files.Release(1)
}

// inputSize is the size of a job's file: as the hash pass read it, else
// (a zip member) as its directory gives it; 0 when unknown.
func (st *telemetryStage) inputSize(j *seriesJob) int64 {
	if j.size > 0 {
		return j.size
	}
	fsys, err := st.fsOf(j.src.artifact)
	if err != nil {
		return 0
	}
	info, err := fs.Stat(fsys, j.file.path)
	if err != nil {
		return 0
	}
	return info.Size()
}

// parsedFile is a job's outcome: its series, or why the file failed.
type parsedFile struct {
	series []*tel.Series
	failed string
	// csvSum is the file's hex sha256 when the parse read it whole for
	// the first time (a zip member the hash pass did not read).
	csvSum string
}

// parseFile opens and parses one job's file.
func (st *telemetryStage) parseFile(j *seriesJob, opt tel.Options) parsedFile {
	fsys, err := st.fsOf(j.src.artifact)
	if err != nil {
		return parsedFile{failed: err.Error()}
	}
	f, err := fsys.Open(j.file.path)
	if err != nil {
		return parsedFile{failed: fmt.Sprintf("cannot open: %v", err)}
	}
	var r io.Reader = f
	var h hash.Hash
	if j.csvSum == "" {
		h = sha256.New()
		r = io.TeeReader(f, h)
	}
	series, perr := tel.Parse(r, opt)
	if perr == nil && h != nil {
		// The parser stops at the last line: hash what follows it too.
		if _, err := io.Copy(h, f); err != nil {
			perr = fmt.Errorf("read: %v", err)
			tel.ReleaseAll(series)
		}
	}
	f.Close()
	if perr != nil {
		return parsedFile{failed: perr.Error()}
	}
	p := parsedFile{series: series}
	if h != nil {
		p.csvSum = hex.EncodeToString(h.Sum(nil))
	}
	return p
}

// sendFile records a parsed file (or its failure) and sends its batches;
// next is the index of the next free series id.
func (st *telemetryStage) sendFile(ctx context.Context, j *seriesJob, p parsedFile, next *int, out chan<- tel.SampleBatch) error {
	a := j.src.artifact
	if p.failed != "" {
		st.fail(a.Name, j.file.path, p.failed, j.items())
		return nil
	}
	series := p.series
	if int64(len(series)) != j.items() {
		// The host scan and the parser disagree: count the file as the
		// items the scan announced, all failed.
		tel.ReleaseAll(series)
		st.fail(a.Name, j.file.path, fmt.Sprintf("%d series parsed, %d hosts scanned", len(series), j.items()), j.items())
		return nil
	}
	if len(series) > len(st.ids)-*next {
		tel.ReleaseAll(series)
		return fmt.Errorf("artifact %s: file %s: %d series, %d ids left", a.Name, j.file.path, len(series), len(st.ids)-*next)
	}
	for _, s := range j.stored {
		st.replace = append(st.replace, s.ID)
	}
	if p.csvSum != "" {
		j.csvSum = p.csvSum
	}
	for k, s := range series {
		id := st.ids[*next]
		*next++
		st.addSeries(j, s, id)
		batches := s.Batches
		s.Batches = nil
		for b, rec := range batches {
			select {
			case out <- tel.SampleBatch{SeriesID: id, Rec: rec}:
			case <-ctx.Done():
				for _, r := range batches[b:] {
					r.Release()
				}
				tel.ReleaseAll(series[k+1:])
				return ctx.Err()
			}
		}
	}
	st.env.Deps.Advance(int64(len(series)))
	return nil
}

// release closes one artifact the stage opened.
func (st *telemetryStage) release(a *source.Artifact) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.open[a] {
		return
	}
	delete(st.open, a)
	st.closeArtifact(a)
}

// addSeries records a parsed series: its row, its links and the
// comparison with the power its points publish.
func (st *telemetryStage) addSeries(j *seriesJob, s *tel.Series, id int64) {
	file := j.file.path
	if j.file.dcgm {
		file += "#" + s.Host
	}
	vendor := s.Vendor
	if j.file.dcgm {
		vendor = j.vendor
	}
	st.rows = append(st.rows, tel.SeriesRow{ID: id, Artifact: j.src.artifact.Name, ConfigKey: j.src.suffix,
		File: file, Vendor: vendor, Format: s.Format, Host: s.Host, Digest: j.digest, Facts: s.Facts,
		CSVSha256: j.csvSum, Stats: s.Stats})
	rs := rowSidecars{side: j.side}
	if j.file.dcgm {
		rs.identity = hostIdentity(s.Host, s.GPUUUIDs)
	}
	st.rowSide = append(st.rowSide, rs)
	st.samples += s.Rows()
	for _, p := range j.points {
		st.links = append(st.links, tel.Link{BenchmarkID: p.ID, SeriesID: id})
		st.measured[p.ID] = true
	}
	st.check(j, file, vendor, s.Facts)
}

// check compares a series' facts with the power its point publishes and,
// for AMD, with the energy accumulators beside the CSV.
func (st *telemetryStage) check(j *seriesJob, file string, vendor tel.Vendor, f tel.Facts) {
	if j.file.dcgm || len(j.points) != 1 {
		return // a multinode bundle's hosts share points: no per-series comparison
	}
	st.compare(j.src.artifact.Name, file, j.points[0], f)
	if vendor == tel.VendorAMD && f.WindowSource == "series" {
		fsys, err := st.fsOf(j.src.artifact)
		if err != nil {
			return
		}
		if delta, ok := amdEnergyDelta(j.src.artifact, fsys, j.file.path); ok {
			st.warnIf(j.src.artifact.Name, file, "amd_energy_accumulator", delta, f.EnergyJ)
		}
	}
}

// compare checks a point's published power against its series.
func (st *telemetryStage) compare(artifact, file string, p tel.RunPoint, f tel.Facts) {
	if p.PowerValid == nil || *p.PowerValid != 1 || !f.HasPower {
		return
	}
	if p.AvgPowerW != nil {
		st.warnIf(artifact, file, "avg_power_w", *p.AvgPowerW, f.AvgPowerW)
	}
	// Energy is comparable only over the benchmark window: the collector
	// runs before and after it, so the series span holds more.
	if p.TotalGPUEnergyJ != nil && f.WindowSource != "series" {
		st.warnIf(artifact, file, "total_gpu_energy_j", *p.TotalGPUEnergyJ, f.EnergyJ)
	}
	if p.AuditObservedGPUs != nil && *p.AuditObservedGPUs != int64(f.GPUs) {
		st.warnings = append(st.warnings, schema.PowerWarning{Artifact: artifact, File: file, Field: "observed_gpu_count",
			Published: float64(*p.AuditObservedGPUs), Measured: float64(f.GPUs), RelDiff: relDiff(float64(*p.AuditObservedGPUs), float64(f.GPUs))})
	}
}

func (st *telemetryStage) warnIf(artifact, file, fieldName string, published, measured float64) {
	d := relDiff(published, measured)
	if d <= powerTolerance {
		return
	}
	st.warnings = append(st.warnings, schema.PowerWarning{Artifact: artifact, File: file, Field: fieldName,
		Published: published, Measured: round(measured, 3), RelDiff: round(d, 4)})
}

func relDiff(published, measured float64) float64 {
	if published == 0 {
		if measured == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(measured-published) / math.Abs(published)
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// publication counts the run's points whose power is valid and published
// with a stored series.
func (st *telemetryStage) publication() {
	for _, p := range st.state.Points {
		if st.measured[p.ID] && p.PowerValid != nil && *p.PowerValid == 1 {
			st.counts.Stats.PowerPublicationPoints++
		}
	}
}

// finishSummary puts the warnings in a stable order.
func (st *telemetryStage) finishSummary() {
	sort.SliceStable(st.warnings, func(i, j int) bool {
		a, b := st.warnings[i], st.warnings[j]
		if a.Artifact != b.Artifact {
			return a.Artifact < b.Artifact
		}
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Field < b.Field
	})
	st.env.Sum.PowerWarnings = append(st.env.Sum.PowerWarnings, st.warnings...)
	if n := len(st.warnings); n > 0 {
		st.env.Tally.Note(runstate.Plural(n, "published power value disagrees", "published power values disagree") +
			fmt.Sprintf(" with the stored telemetry by more than %.0f %% (see power warnings)", powerTolerance*100))
	}
}
