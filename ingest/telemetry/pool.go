package telemetry

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Pool is an Arrow allocator that recycles the buffers of released
// batches. Parsing a run allocates the same few buffer sizes over and over
// (a batch's columns, the CSV reader's builders); reusing them keeps the
// garbage collector and the kernel (page faults, madvise) out of the hot
// path. Buffers come in power-of-two sizes; at most poolDepth free
// buffers are kept per size. Safe for concurrent use (batches are built by
// the parser and released by the COPY encoder).
type Pool struct {
	mu   sync.Mutex
	free [48][][]byte
}

const (
	poolDepth    = 64
	minPoolClass = 6 // 64 bytes
)

// NewPool returns an empty pool.
func NewPool() *Pool { return &Pool{} }

var _ memory.Allocator = (*Pool)(nil)

func sizeClass(size int) int {
	if size <= 1<<minPoolClass {
		return minPoolClass
	}
	return bits.Len(uint(size - 1))
}

// Allocate returns a zeroed buffer of size bytes (its capacity is the
// size class).
func (p *Pool) Allocate(size int) []byte {
	c := sizeClass(size)
	p.mu.Lock()
	if n := len(p.free[c]); n > 0 {
		b := p.free[c][n-1]
		p.free[c] = p.free[c][:n-1]
		p.mu.Unlock()
		clear(b[:cap(b)])
		return b[:size]
	}
	p.mu.Unlock()
	return make([]byte, size, 1<<c)
}

// Reallocate grows b to size, moving it to a larger class when needed.
func (p *Pool) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free returns b to its class.
func (p *Pool) Free(b []byte) {
	c := cap(b)
	if c < 1<<minPoolClass || c&(c-1) != 0 {
		return // not one of ours
	}
	cls := bits.Len(uint(c)) - 1
	p.mu.Lock()
	if len(p.free[cls]) < poolDepth {
		p.free[cls] = append(p.free[cls], b[:0])
	}
	p.mu.Unlock()
}
