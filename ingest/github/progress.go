package github

import (
	"sync"
	"time"

	"go.uber.org/zap"
)

// Progress is told about downloads as they happen. Implementations must
// be safe for concurrent use.
type Progress interface {
	// Start announces n artifacts of bytes in total (as listed).
	Start(n int, bytes int64)
	// Done reports one artifact in the cache: downloaded, or found there.
	Done(name string, bytes int64, cached bool)
	// Finish ends the display; err is the batch's error, if any.
	Finish(err error)
}

// tally counts a batch of downloads; the Progress implementations embed
// it under their lock.
type tally struct {
	total, done, cached   int
	totalBytes, doneBytes int64
	started               time.Time
}

func (t *tally) start(n int, bytes int64) { t.total, t.totalBytes, t.started = n, bytes, time.Now() }

func (t *tally) add(bytes int64, cached bool) {
	t.done++
	if cached {
		t.cached++
	} else {
		t.doneBytes += bytes
	}
}

// logProgress writes structured progress lines: one per tenth of the
// batch, and a closing one. For CI, where nobody watches a terminal.
type logProgress struct {
	log *zap.Logger

	mu sync.Mutex
	tally
	nextMark int
}

func newLogProgress(log *zap.Logger) *logProgress { return &logProgress{log: log} }

func (p *logProgress) Start(n int, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.start(n, bytes)
	p.nextMark = 1
	p.log.Info("downloading artifacts", zap.Int("artifacts", n), zap.Int64("bytes", bytes))
}

func (p *logProgress) Done(_ string, bytes int64, cached bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.add(bytes, cached)
	if p.total > 0 && p.done*10 >= p.nextMark*p.total && p.done < p.total {
		p.nextMark = p.done*10/p.total + 1
		p.log.Info("download progress", zap.Int("done", p.done), zap.Int("of", p.total),
			zap.Int("cached", p.cached), zap.Int64("bytes_downloaded", p.doneBytes))
	}
}

func (p *logProgress) Finish(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fields := []zap.Field{zap.Int("done", p.done), zap.Int("of", p.total), zap.Int("cached", p.cached),
		zap.Int64("bytes_downloaded", p.doneBytes), zap.Duration("took", time.Since(p.started))}
	if err != nil {
		p.log.Warn("downloads stopped", fields...)
		return
	}
	p.log.Info("artifacts ready", fields...)
}
