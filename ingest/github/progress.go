package github

import (
	"fmt"
	"io"
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

// TerminalProgress redraws one status line on a terminal, at most ten
// times a second.
type TerminalProgress struct {
	w io.Writer

	mu sync.Mutex
	tally
	drawn time.Time
}

// NewTerminalProgress draws on w, which should be a terminal.
func NewTerminalProgress(w io.Writer) *TerminalProgress { return &TerminalProgress{w: w} }

func (p *TerminalProgress) Start(n int, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.start(n, bytes)
	p.draw()
}

func (p *TerminalProgress) Done(_ string, bytes int64, cached bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.add(bytes, cached)
	if p.done == p.total || time.Since(p.drawn) >= 100*time.Millisecond {
		p.draw()
	}
}

func (p *TerminalProgress) Finish(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw()
	state := "done"
	if err != nil {
		state = "stopped"
	}
	fmt.Fprintf(p.w, " %s in %s\n", state, time.Since(p.started).Round(10*time.Millisecond))
}

func (p *TerminalProgress) draw() {
	p.drawn = time.Now()
	fmt.Fprintf(p.w, "\r\033[Kartifacts %d/%d (%d cached)  %s/%s downloaded", p.done, p.total, p.cached,
		mib(p.doneBytes), mib(p.totalBytes))
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
