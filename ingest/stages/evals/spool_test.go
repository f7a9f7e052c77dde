package evals

import (
	"bytes"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// add appends b to the spool as the spooler does with an encoded line.
func (s *spool) add(b []byte) {
	s.buf = append(s.buf, b...)
	s.flush(false)
}

// What is spooled reads back whole and in order, across the file and the
// bytes not flushed yet; the spool stops accepting at its limit.
func TestSpoolReadsBackInOrder(t *testing.T) {
	s, err := newSpool()
	require.NoError(t, err)
	defer s.close()
	s.limit = 3 * spoolFlush
	var want []byte
	for i := 0; s.accepts(); i++ {
		line := bytes.Repeat([]byte{byte(i)}, 1000+i%7)
		want = append(want, line...)
		s.add(line)
	}
	require.GreaterOrEqual(t, int64(len(want)), s.limit)
	require.Less(t, int64(len(want)), s.limit+1007)
	require.NotZero(t, s.written, "flushed to the file as it went")
	got, err := io.ReadAll(s.reader())
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// A write that fails (a full disk: /dev/full) ends the spooling but loses
// nothing: the bytes it could not write are read back from memory.
func TestSpoolWriteFailureKeepsTheBytes(t *testing.T) {
	f, err := os.OpenFile("/dev/full", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no /dev/full here: %v", err)
	}
	s := &spool{f: f, limit: maxSpool}
	defer f.Close()
	line := bytes.Repeat([]byte("x"), spoolFlush+1)
	s.add(line)
	require.ErrorIs(t, s.err, syscall.ENOSPC)
	require.False(t, s.accepts())
	require.Zero(t, s.written)
	got, err := io.ReadAll(s.reader())
	require.NoError(t, err)
	require.Equal(t, line, got)
}
