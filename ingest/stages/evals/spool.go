package evals

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// maxSpool bounds the bytes of encoded sample lines a spool holds; past
// it the spooler stops taking lines, and the sample workers wait for the
// COPY, as they would without a spool.
const maxSpool = 256 << 20

// spoolFlush is how many encoded bytes are gathered before they are
// written to the spool's file.
const spoolFlush = 256 << 10

// spool holds sample lines encoded while the run's connection is busy
// (the benchmark rows being applied), in an unlinked temporary file, so
// that they cost no memory however many there are. A write that fails
// (a full disk) keeps its bytes in memory and ends the spooling: what
// was spooled is still sent, and the lines after it go straight to the
// COPY.
type spool struct {
	f       *os.File
	limit   int64  // maxSpool
	written int64  // bytes in f
	buf     []byte // bytes after them, not written yet
	err     error  // the write that ended the spooling
	// name is the file's, when it could not be unlinked at once (close
	// removes it then).
	name string
}

// newSpool creates the spool's file in the temporary directory.
func newSpool() (*spool, error) {
	f, err := os.CreateTemp("", "ingest-eval-samples-*")
	if err != nil {
		return nil, fmt.Errorf("create the samples spool: %w", err)
	}
	s := &spool{f: f, limit: maxSpool}
	// Unlinked at once where the system allows it (the file lives while it
	// is open); otherwise close removes it.
	if os.Remove(f.Name()) != nil {
		s.name = f.Name()
	}
	return s, nil
}

// accepts says whether the spool takes more lines.
func (s *spool) accepts() bool {
	return s.err == nil && s.written+int64(len(s.buf)) < s.limit
}

// flush writes the gathered bytes to the file once there are enough, or
// all of them when force is set.
func (s *spool) flush(force bool) {
	if s.err != nil || len(s.buf) == 0 || (!force && len(s.buf) < spoolFlush) {
		return
	}
	n, err := s.f.Write(s.buf)
	s.written += int64(n)
	s.buf = s.buf[:copy(s.buf, s.buf[n:])]
	if err != nil {
		s.err = err
	}
}

// reader reads back everything spooled, in order. The spool must not be
// written to afterwards.
func (s *spool) reader() io.Reader {
	s.flush(true)
	return io.MultiReader(io.NewSectionReader(s.f, 0, s.written), bytes.NewReader(s.buf))
}

// close releases the file (removing it where it was not unlinked).
func (s *spool) close() {
	_ = s.f.Close()
	if s.name != "" {
		_ = os.Remove(s.name)
	}
}
