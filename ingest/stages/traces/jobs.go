package traces

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"

	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/trace"
	"github.com/inferencex/ingest/schema"
)

// fileDigest is the sha256 and size of one file as read in the first pass.
type fileDigest struct {
	path   string
	sha    []byte
	size   int64
	stream int32 // set in the second pass when the blob is sent
	stored int64
	chunks int32
	send   bool
}

// sidecarJob is the raw side of one AgentX point: the files of one AIPerf
// directory of a raw sibling artifact, shared by every row it serves.
type sidecarJob struct {
	raw    *source.Artifact
	files  trace.Files
	rows   []schema.TracePoint
	digest []byte
	// point is what its chart series depend on beyond the files: a
	// disaggregated Dynamo config among its rows (pointContexts).
	point trace.PointContext
	// profile, aiperf, metricsJSON, metricsCSV; nil entries are absent.
	parts [4]*fileDigest
	known bool
	// stale: stored, with payloads of an older build (recomputed).
	stale bool
	// set by the second pass
	derived  *trace.Derived
	streams  [3]int32 // stats, chart, timeline; 0 for none
	failed   string   // reason, with failedFile
	failFile string
	// metricsProblem says why the server metrics export could not be
	// read: the trace is stored without server-side series, and the
	// report says so.
	metricsProblem string
	// scrape is server_metrics_export.csv, read in the first pass (nil
	// without one); scrapeProblem why it could not be read.
	scrape        trace.Scrape
	scrapeProblem string
}

// logJob is the server log artifact of one or more rows.
type logJob struct {
	art    *source.Artifact
	rows   []schema.TracePoint
	digest []byte
	files  []*fileDigest
	known  bool
	// set by the second pass: the stored files (tarballs unpacked).
	stored   []*fileDigest
	kv       *int64
	failed   string
	failFile string
	// startup are the startup lines of the bundle's worker logs (tarball
	// entries included), read in the first pass; nil when a tarball could
	// not be walked.
	startup []trace.LogFileLines
}

// hashFile reads one file of an artifact through sha256, and through also
// when it is not nil.
func hashFile(fsys fs.FS, name string, also io.Writer) (*fileDigest, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	w := io.Writer(h)
	if also != nil {
		w = io.MultiWriter(h, also)
	}
	n, err := io.Copy(w, f)
	if err != nil {
		return nil, err
	}
	return &fileDigest{path: name, sha: h.Sum(nil), size: n}, nil
}

// bundleDigest is sha256 over "name NUL hex(sha256) NL" of files in order.
func bundleDigest(tags []string, files []*fileDigest) []byte {
	h := sha256.New()
	for i, f := range files {
		if f == nil {
			continue
		}
		io.WriteString(h, tags[i])
		h.Write([]byte{0})
		io.WriteString(h, hex.EncodeToString(f.sha))
		h.Write([]byte{'\n'})
	}
	return h.Sum(nil)
}

var sidecarTags = []string{trace.ProfileExport, trace.ProfileAIPerfJSON, trace.ServerMetricsJSON, trace.ServerMetricsCSV}

// hashSidecar is the first pass over a sidecar: digests only.
func (j *sidecarJob) hash(rec *runstate.Record) {
	fsys, err := j.raw.FS()
	if err != nil {
		j.failed, j.failFile = err.Error(), ""
		return
	}
	for i, p := range []string{j.files.Profile, j.files.AIPerfJSON, j.files.MetricsJSON, j.files.MetricsCSV} {
		if p == "" {
			continue
		}
		var csv *bytes.Buffer
		if i == 3 {
			csv = &bytes.Buffer{}
		}
		d, err := hashFile(fsys, p, bufferOrNil(csv))
		if err != nil {
			j.failed, j.failFile = fmt.Sprintf("cannot read: %v", err), p
			return
		}
		j.parts[i] = d
		rec.AddFile(p, [sha256.Size]byte(d.sha), d.size)
		if csv != nil {
			if j.scrape, err = trace.ReadScrape(csv); err != nil {
				j.scrape, j.scrapeProblem = nil, err.Error()
			}
		}
	}
	j.digest = bundleDigest(sidecarTags, j.parts[:])
}

// adoptedDigest is the bundle digest of the files the reference ingest
// kept of this sidecar (all but profile_export_aiperf.json), the digest
// ingest adopt gave its trace; nil when the job has no such file (its
// digest is that already).
func (j *sidecarJob) adoptedDigest() []byte {
	if j.parts[1] == nil {
		return nil
	}
	kept := j.parts
	kept[1] = nil
	return bundleDigest(sidecarTags, kept[:])
}

// matchAdopted gives the job the digest of the adopted trace one of its
// rows is linked to when that trace holds the same files but the AIPerf
// JSON: the rerun of a run the reference stored is then a duplicate, and
// the rows keep their trace ids. The AIPerf JSON is not added to the
// adopted trace (docs/operations.md, "Switching from the reference
// ingest").
func (j *sidecarJob) matchAdopted(rows map[int64]schema.TraceRowLink) {
	kept := j.adoptedDigest()
	if kept == nil {
		return
	}
	for _, p := range j.rows {
		if rows[p.RowID].TraceAdopted && sameDigest(p.TraceDigest, kept) {
			j.digest = kept
			return
		}
	}
}

// bufferOrNil keeps a nil *bytes.Buffer from becoming a non-nil io.Writer.
func bufferOrNil(b *bytes.Buffer) io.Writer {
	if b == nil {
		return nil
	}
	return b
}

// startupLines collects the worker logs' startup lines of a server log
// file: a worker log itself (through the hash read), or the worker-log
// entries of a tarball (walked once more after hashing).
func (j *logJob) startupLines(fsys fs.FS, p string, lines *trace.StartupLines) {
	if j.startup == nil { // a tarball of the bundle could not be walked
		return
	}
	if lines != nil {
		_ = lines.Close()
		j.startup = append(j.startup, trace.LogFileLines{Name: p, Lines: lines.Lines})
		return
	}
	if !trace.IsTarball(p) {
		return
	}
	f, err := fsys.Open(p)
	if err != nil {
		j.startup = nil
		return
	}
	defer f.Close()
	var found []trace.LogFileLines
	err = trace.WalkTarball(f, func(name string, _ int64, r io.Reader) error {
		if _, _, ok := trace.WorkerOfLogFile(name); !ok {
			return nil
		}
		sl := trace.NewStartupLines()
		if _, err := io.Copy(sl, r); err != nil {
			return err
		}
		_ = sl.Close()
		found = append(found, trace.LogFileLines{Name: p + "/" + name, Lines: sl.Lines})
		return nil
	})
	if err != nil {
		j.startup = nil // the second pass, or the stored bundle, says why
		return
	}
	j.startup = append(j.startup, found...)
}

// hash is the first pass over a server log artifact. Tarballs count as one
// file here: an unchanged tarball is never unpacked again.
func (j *logJob) hash(rec *runstate.Record) {
	fsys, err := j.art.FS()
	if err != nil {
		j.failed = err.Error()
		return
	}
	// A file the tree refused (a link, a hostile or NUL name) fails the
	// bundle, as an unsafe tarball entry does.
	for _, pr := range j.art.Problems {
		j.failed, j.failFile = pr.Reason, pr.File
		return
	}
	j.startup = []trace.LogFileLines{}
	for _, p := range j.art.Files {
		if reason := trace.BadName(p); reason != "" {
			j.failed, j.failFile = fmt.Sprintf("file %s: %s", strconv.Quote(p), reason), strconv.Quote(p)
			return
		}
		var lines *trace.StartupLines
		var also io.Writer
		if _, _, ok := trace.WorkerOfLogFile(p); ok {
			lines = trace.NewStartupLines()
			also = lines
		}
		d, err := hashFile(fsys, p, also)
		if err != nil {
			j.failed, j.failFile = fmt.Sprintf("cannot read: %v", err), p
			return
		}
		j.files = append(j.files, d)
		rec.AddFile(p, [sha256.Size]byte(d.sha), d.size)
		j.startupLines(fsys, p, lines)
	}
	if len(j.files) == 0 {
		j.failed = "the artifact holds no files"
		return
	}
	tags := make([]string, len(j.files))
	for i, f := range j.files {
		tags[i] = f.path
	}
	j.digest = bundleDigest(tags, j.files)
}

// primaryLog is the bundle's main file: server.log when there is one,
// else the first file in name order.
func primaryLog(files []*fileDigest) string {
	first := files[0].path
	for _, f := range files {
		if path.Base(f.path) == "server.log" {
			return f.path
		}
		first = min(first, f.path)
	}
	return first
}

func sameDigest(a, b []byte) bool { return a != nil && bytes.Equal(a, b) }

// pointContexts settles each sidecar's point context from the configs of
// the rows it serves: a sidecar serving a disaggregated point under a
// server-metrics adapter (Dynamo, TensorRT-LLM, llm-d) has per-source chart
// series (one sidecar serves the rows of one AIPerf directory, whose
// configs agree; should they not, any such row decides).
func (s *traceStage) pointContexts() {
	for _, j := range s.sidecarOrder {
		for _, p := range j.rows {
			l, ok := s.rows[p.RowID]
			if !ok {
				continue
			}
			pc := trace.PointContext{Framework: l.Config.Framework, Disagg: l.Config.Disagg}
			if j.point = pc; pc.PerSource() {
				break
			}
		}
	}
}
