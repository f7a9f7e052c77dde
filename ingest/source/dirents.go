package source

import "sync"

// direntBufSize is the getdents(2) buffer of one directory listing.
const direntBufSize = 8192

// direntBufs recycles the directory-listing buffers of one tree: a run
// holds thousands of one-file folders, each listed once, and a buffer
// allocated per folder makes garbage in proportion to the run. A nil
// *direntBufs allocates a buffer per listing.
type direntBufs struct {
	pool sync.Pool
}

func (b *direntBufs) get() *[direntBufSize]byte {
	if b != nil {
		if p, ok := b.pool.Get().(*[direntBufSize]byte); ok {
			return p
		}
	}
	return new([direntBufSize]byte)
}

func (b *direntBufs) put(p *[direntBufSize]byte) {
	if b != nil {
		b.pool.Put(p)
	}
}
