package traces

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/trace"
	"github.com/inferencex/ingest/schema"
)

// traceChunkSize is the size of one staged chunk: large enough to keep
// COPY rows few, small enough that a handful in flight cost little memory.
const traceChunkSize = 1 << 20

// chunkQueue is how many chunks may wait for the COPY.
const chunkQueue = 4

// streamer produces every chunk of the second pass for one COPY: it reads
// each unknown sidecar and server log once, compressing, hashing and
// deriving as the bytes pass.
type streamer struct {
	ctx context.Context
	out chan<- schema.TraceChunk
	ids *atomic.Int32 // stream ids, shared by the workers of one COPY
	log *zap.Logger
	gz  *gzip.Writer
}

// chunker cuts a byte stream into chunks of one stream.
type chunker struct {
	s      *streamer
	stream int32
	seq    int32
	buf    []byte
	total  int64
}

func (s *streamer) newChunker() *chunker {
	return &chunker{s: s, stream: s.ids.Add(1), buf: make([]byte, 0, traceChunkSize)}
}

func (c *chunker) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		room := traceChunkSize - len(c.buf)
		take := min(room, len(p))
		c.buf = append(c.buf, p[:take]...)
		p = p[take:]
		if len(c.buf) == traceChunkSize {
			if err := c.flush(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

func (c *chunker) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	select {
	case c.s.out <- schema.TraceChunk{Stream: c.stream, Seq: c.seq, Data: c.buf}:
	case <-c.s.ctx.Done():
		return c.s.ctx.Err()
	}
	c.seq++
	c.total += int64(len(c.buf))
	c.buf = make([]byte, 0, traceChunkSize)
	return nil
}

// fileWriter streams a file into a new stream through enc (gzip for a
// blob, trace.LogText for a log's text) and hashes the file's bytes.
type fileWriter struct {
	c    *chunker
	enc  io.WriteCloser
	h    hash.Hash
	size int64
}

func (s *streamer) newBlob() *fileWriter {
	c := s.newChunker()
	if s.gz == nil {
		s.gz, _ = gzip.NewWriterLevel(c, gzip.BestSpeed)
	} else {
		s.gz.Reset(c)
	}
	return &fileWriter{c: c, enc: s.gz, h: sha256.New()}
}

func (s *streamer) newText() *fileWriter {
	c := s.newChunker()
	return &fileWriter{c: c, enc: trace.NewLogText(c), h: sha256.New()}
}

func (w *fileWriter) Write(p []byte) (int, error) {
	w.h.Write(p)
	w.size += int64(len(p))
	return w.enc.Write(p)
}

// close finishes the stream and describes the file's blob or text.
func (w *fileWriter) close(d *fileDigest) error {
	if err := w.enc.Close(); err != nil {
		return err
	}
	if err := w.c.flush(); err != nil {
		return err
	}
	d.stream, d.stored, d.chunks, d.send = w.c.stream, w.c.total, w.c.seq, true
	if !bytes.Equal(w.h.Sum(nil), d.sha) || w.size != d.size {
		return fmt.Errorf("changed while being read (%d bytes, digest differs from the first read)", w.size)
	}
	return nil
}

// payload sends an uncompressed JSON payload as a stream.
func (s *streamer) payload(b []byte) (int32, error) {
	c := s.newChunker()
	if _, err := c.Write(b); err != nil {
		return 0, err
	}
	return c.stream, c.flush()
}

// readPart streams one sidecar file: into a new blob unless it is stored,
// and through consume (which must read to EOF) when set.
func (s *streamer) readPart(fsys fs.FS, d *fileDigest, knownBlob bool, consume func(io.Reader) error) error {
	if knownBlob && consume == nil {
		return nil
	}
	f, err := fsys.Open(d.path)
	if err != nil {
		return err
	}
	defer f.Close()
	if knownBlob {
		if err := consume(f); err != nil {
			return err
		}
		_, err := io.Copy(io.Discard, f)
		return err
	}
	bw := s.newBlob()
	if consume == nil {
		if _, err := io.Copy(bw, f); err != nil {
			return err
		}
		return bw.close(d)
	}
	// Parse and compress side by side: the bytes the parser reads are
	// handed through a pipe to a goroutine that hashes and compresses them.
	pr, pw := io.Pipe()
	compressed := make(chan error, 1)
	go func() {
		_, err := io.Copy(bw, pr)
		pr.CloseWithError(err) // unblocks the parser if compression fails
		compressed <- err
	}()
	r := io.TeeReader(f, pw)
	err = consume(r)
	if err == nil {
		_, err = io.Copy(io.Discard, r)
	}
	pw.CloseWithError(err)
	if cerr := <-compressed; err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return bw.close(d)
}

// sidecar is the second pass over one unknown sidecar.
func (s *streamer) sidecar(j *sidecarJob, known schema.TraceKnown) {
	fail := func(file string, err error) {
		if j.failed == "" {
			j.failed, j.failFile = err.Error(), file
		}
	}
	fsys, err := j.raw.FS()
	if err != nil {
		fail("", err)
		return
	}
	var profile *trace.Profile
	pd := j.parts[0]
	err = s.readPart(fsys, pd, known.Blobs[string(pd.sha)], func(r io.Reader) error {
		p, err := trace.ReadProfile(r)
		profile = p
		return err
	})
	if err != nil {
		fail(pd.path, err)
		return
	}
	var sm *trace.ServerMetrics
	for i := 1; i < len(j.parts); i++ {
		d := j.parts[i]
		if d == nil {
			continue
		}
		var consume func(io.Reader) error
		if i == 2 {
			consume = func(r io.Reader) error {
				m, err := trace.ReadServerMetrics(r, d.size, j.point)
				if err != nil {
					// Derivation failures are isolated: the trace is
					// stored without server-side series, and the
					// report names the file.
					s.log.Warn("server metrics export unreadable", zap.String("artifact", j.raw.Name),
						zap.String("file", d.path), zap.Error(err))
					j.metricsProblem = err.Error()
					return nil
				}
				sm = m
				return nil
			}
		}
		if err := s.readPart(fsys, d, known.Blobs[string(d.sha)], consume); err != nil {
			fail(d.path, err)
			return
		}
	}
	der, err := trace.Derive(profile, sm)
	if err != nil {
		fail(pd.path, fmt.Errorf("derive payloads: %w", err))
		return
	}
	j.derived = der
	for i, b := range []json.RawMessage{der.AggregateStats, der.ChartSeries} {
		if b == nil {
			continue // no chart series without server metrics: NULL
		}
		id, err := s.payload(b)
		if err != nil {
			fail(pd.path, err)
			return
		}
		j.streams[i] = id
	}
	// The timeline holds every timed request: streamed into its own
	// stream one request at a time (NULL when none is timed).
	if profile.HasTimeline() {
		c := s.newChunker()
		if err := profile.WriteTimeline(c); err != nil {
			fail(pd.path, err)
			return
		}
		if err := c.flush(); err != nil {
			fail(pd.path, err)
			return
		}
		j.streams[2] = c.stream
	}
}

// serverLog is the second pass over one unknown server log artifact: its
// log files (.log, .out), tarballs entry by entry, are stored as text
// (each once: a text already stored is only scanned) and scanned for the
// KV-cache capacity. Other files are not stored, as with the reference.
func (s *streamer) serverLog(j *logJob, known schema.TraceKnown) {
	fsys, err := j.art.FS()
	if err != nil {
		j.failed = err.Error()
		return
	}
	var kvs []*int64
	for _, d := range j.files {
		if trace.IsTarball(d.path) {
			if err := s.tarball(fsys, d, j, &kvs); err != nil {
				j.failed, j.failFile = err.Error(), d.path
				return
			}
			continue
		}
		if !trace.IsLogFile(d.path) {
			continue
		}
		if err := checkLogSize(d.size); err != nil {
			j.failed, j.failFile = err.Error(), d.path
			return
		}
		scan := trace.NewKVScanner()
		if err := s.logFile(fsys, d, known.LogTexts[string(d.sha)], scan); err != nil {
			j.failed, j.failFile = err.Error(), d.path
			return
		}
		kvs = append(kvs, scan.Tokens())
		j.stored = append(j.stored, d)
	}
	j.kv = sumKV(kvs)
}

// logFile reads one log file through scan and, unless its text is stored,
// into a new text stream.
func (s *streamer) logFile(fsys fs.FS, d *fileDigest, knownText bool, scan io.Writer) error {
	f, err := fsys.Open(d.path)
	if err != nil {
		return err
	}
	defer f.Close()
	if knownText {
		_, err := io.Copy(scan, f)
		return err
	}
	tw := s.newText()
	if _, err := io.Copy(io.MultiWriter(tw, scan), f); err != nil {
		return err
	}
	return tw.close(d)
}

func (s *streamer) tarball(fsys fs.FS, d *fileDigest, j *logJob, kvs *[]*int64) error {
	f, err := fsys.Open(d.path)
	if err != nil {
		return err
	}
	defer f.Close()
	var entries []*fileDigest
	files := 0
	err = trace.WalkTarball(f, func(name string, size int64, r io.Reader) error {
		files++
		if !trace.IsLogFile(name) {
			return nil
		}
		if err := checkLogSize(size); err != nil {
			return err
		}
		tw := s.newText()
		scan := trace.NewKVScanner()
		if _, err := io.Copy(io.MultiWriter(tw, scan), r); err != nil {
			return err
		}
		e := &fileDigest{path: trace.TarballDir(d.path) + "/" + name, size: tw.size}
		e.sha = tw.h.Sum(nil)
		if err := tw.close(e); err != nil {
			return err
		}
		*kvs = append(*kvs, scan.Tokens())
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return err
	}
	if files == 0 {
		return fmt.Errorf("the tarball holds no files")
	}
	j.stored = append(j.stored, entries...)
	return nil
}

// maxLogText is the largest log file stored: the site reads a log as one
// PostgreSQL text value (at most 1 GB, built here from the staged chunks
// in one piece), and the reference reads it into one string.
const maxLogText = 512 << 20

// checkLogSize refuses a log file too large to be one text value; the
// bundle fails with the reason, the rest of the run lands.
func checkLogSize(size int64) error {
	if size > maxLogText {
		return fmt.Errorf("log file of %d bytes: larger than %d MiB, the most stored as one text value", size, maxLogText>>20)
	}
	return nil
}

// sumKV adds the capacities the files of a bundle name.
func sumKV(vs []*int64) *int64 {
	var sum int64
	found := false
	for _, v := range vs {
		if v != nil {
			sum += *v
			found = true
		}
	}
	if !found {
		return nil
	}
	return &sum
}
