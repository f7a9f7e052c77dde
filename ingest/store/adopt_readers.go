package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"regexp"

	"github.com/jackc/pgx/v5"
	"github.com/klauspost/compress/gzip"
	"golang.org/x/sync/errgroup"

	"github.com/inferencex/ingest/ingest/trace"
)

// The trace blobs are read and parsed by traceReaders readers while the
// adopt's transaction writes the traces before them, at most
// traceLookahead traces read ahead of the one being written: memory
// holds that many parsed traces, whatever the number of traces. The
// readers and the transaction fit the store's pool, which OpenWith never
// makes smaller than three connections.
const (
	traceReaders   = 2
	traceLookahead = 3
)

// traceRow is one reference trace row: which blobs it has, their stored
// lengths, and the reference's record of its server metrics export's
// uncompressed size (-1 when none).
type traceRow struct {
	id                 int64
	profile, json, csv bool
	profN, jsonN, csvN int64
	jsonSize           int64
}

// traceRead is what a reader found in a trace row's gzip blobs: for the
// profile export and the server metrics export, the digest (sha256 of the
// uncompressed bytes) and the uncompressed size, and what the trace code
// read from them.
type traceRead struct {
	row     traceRow
	in      payloadInput
	digests [2][]byte
	sizes   [2]int64
	read    int64 // blob bytes read through the client
}

// snapshotID is the form of pg_export_snapshot's result, checked before
// it is written into SET TRANSACTION SNAPSHOT (which takes no parameter).
var snapshotID = regexp.MustCompile(`^[0-9A-Fa-f-]+$`)

// readTraces reads the trace rows of all with traceReaders readers, each
// in its own read-only transaction on the adopt transaction's snapshot
// (the reference's tables are locked against writes and the adopt never
// writes them, so the readers see what it sees), and hands each read to
// use in order, on the calling goroutine. While the next trace is not
// read yet, idle runs other work of the adopt's transaction, one piece a
// call, until it says none is left. A reader's failure, use's or idle's
// stops the others.
func (a *adoption) readTraces(ctx context.Context, all []traceRow, use func(traceRead) error,
	idle func(context.Context) (bool, error)) error {
	if len(all) == 0 {
		return nil
	}
	var snap string
	if err := a.tx.QueryRow(ctx, qAdoptExportSnapshot).Scan(&snap); err != nil {
		return fmt.Errorf("adopt agentic_trace_replay: export the snapshot: %w", err)
	}
	if !snapshotID.MatchString(snap) {
		return fmt.Errorf("adopt agentic_trace_replay: unexpected snapshot id %q", snap)
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	results := make([]chan traceRead, len(all))
	for i := range results {
		results[i] = make(chan traceRead, 1)
	}
	window := make(chan struct{}, traceLookahead)
	jobs := make(chan int)
	g.Go(func() error {
		defer close(jobs)
		for i := range all {
			select {
			case window <- struct{}{}:
			case <-gctx.Done():
				return nil
			}
			select {
			case jobs <- i:
			case <-gctx.Done():
				return nil
			}
		}
		return nil
	})
	for range traceReaders {
		g.Go(func() error {
			return a.reader(gctx, snap, func(q pgx.Tx) error {
				for i := range jobs {
					r, err := readTrace(gctx, q, all[i])
					if err != nil {
						return fmt.Errorf("adopt agentic_trace_replay %d: %w", all[i].id, err)
					}
					results[i] <- r
				}
				return nil
			})
		})
	}
	var useErr error
	idling := true
consume:
	for i := range all {
		for idling && len(results[i]) == 0 && gctx.Err() == nil {
			if idling, useErr = idle(ctx); useErr != nil {
				cancel()
				break consume
			}
		}
		select {
		case r := <-results[i]:
			<-window
			if useErr = use(r); useErr != nil {
				cancel()
				break consume
			}
		case <-gctx.Done():
			break consume
		}
	}
	werr := g.Wait()
	switch {
	case useErr != nil:
		return useErr
	case werr != nil:
		return werr
	}
	return parent.Err()
}

// reader runs f in a read-only transaction of its own on snapshot snap.
func (a *adoption) reader(ctx context.Context, snap string, f func(pgx.Tx) error) error {
	conn, err := a.s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("adopt agentic_trace_replay: connect a reader: %w", err)
	}
	defer conn.Release()
	return pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, fmt.Sprintf(qAdoptImportSnapshot, snap)); err != nil {
				return fmt.Errorf("adopt agentic_trace_replay: take the snapshot: %w", err)
			}
			return f(tx)
		})
}

// readTrace reads trace row t's gzip blobs through q, each once: its
// bytes feed the digest and the trace code together.
func readTrace(ctx context.Context, q pgx.Tx, t traceRow) (traceRead, error) {
	r := traceRead{row: t}
	pc, err := traceContext(ctx, q, t.id)
	if err != nil {
		return r, err
	}
	if t.profile {
		r.digests[0], r.sizes[0], r.in.profileErr, err = readGzip(ctx, q, t.id, colProfile, t.profN, &r.read, func(rd io.Reader) (err error) {
			r.in.profile, err = trace.ReadProfile(rd)
			return err
		})
		if err != nil {
			return r, fmt.Errorf("%s: %w", colProfile, err)
		}
	}
	if t.json {
		// ReadServerMetrics needs the export's size before it reads: the
		// reference's record, checked against the bytes read; a wrong
		// record (or none) reads the export again, told its size.
		r.digests[1], r.sizes[1], r.in.metricsErr, err = readGzip(ctx, q, t.id, colJSON, t.jsonN, &r.read, func(rd io.Reader) (err error) {
			r.in.metrics, err = trace.ReadServerMetrics(rd, t.jsonSize, pc)
			return err
		})
		if err == nil && r.sizes[1] != t.jsonSize {
			var zr *gzip.Reader
			if zr, err = gzip.NewReader(&sliceReader{ctx: ctx, q: q, id: t.id, col: colJSON, n: t.jsonN, read: &r.read}); err == nil {
				r.in.metrics, r.in.metricsErr = trace.ReadServerMetrics(zr, r.sizes[1], pc)
			}
		}
		if err != nil {
			return r, fmt.Errorf("%s: %w", colJSON, err)
		}
	}
	return r, nil
}

// readGzip reads gzip column col (n bytes) of reference trace row id
// through q and returns its digest (sha256 of the uncompressed bytes) and
// uncompressed size. The uncompressed bytes go to the digest and to parse,
// whose error is returned as perr (the rest of the column is read when
// parse stops early); a read or gzip error is err.
func readGzip(ctx context.Context, q pgx.Tx, id int64, col string, n int64, read *int64, parse func(io.Reader) error) (d []byte, size int64, perr, err error) {
	zr, err := gzip.NewReader(&sliceReader{ctx: ctx, q: q, id: id, col: col, n: n, read: read})
	if err != nil {
		return nil, 0, nil, err
	}
	h := sha256.New()
	size, perr, err = parseAll(zr, h, parse)
	if err != nil {
		return nil, 0, nil, err
	}
	return h.Sum(nil), size, perr, nil
}

// parseAll feeds r to parse and, as parse reads it, to sink; the rest of r
// is read (into sink) when parse stops early. It returns the bytes read,
// parse's error as perr, and a read error as err: a parser that stops at a
// read error must not hide it as a parse error.
func parseAll(r io.Reader, sink io.Writer, parse func(io.Reader) error) (n int64, perr, err error) {
	src := &readErr{r: r}
	tee := io.TeeReader(src, sink)
	perr = parse(tee)
	if _, err := io.Copy(io.Discard, tee); err != nil {
		return 0, nil, err
	}
	if src.err != nil {
		return 0, nil, src.err
	}
	return src.n, perr, nil
}
