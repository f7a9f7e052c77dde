package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// The eval sample lines' staging COPY is encoded here, by hand, in
// PostgreSQL's binary COPY format (the framing is copyHeader's), so that
// lines can be encoded before the run's connection is free to send them:
// the evals stage encodes them into a spool while the benchmark rows are
// applied (stages/evals).

// evalSampleCopy is the COPY of the sample lines, in sampleStagingColumns
// order.
var evalSampleCopy = `COPY stage_eval_sample (` + strings.Join(sampleStagingColumns, ", ") + `) FROM STDIN WITH (FORMAT binary)`

// evalSampleFields is the number of fields of a stage_eval_sample row.
const evalSampleFields = 19

// EncodeEvalSample appends sample line r to dst as one row of the
// staging COPY that StageEvalSamples sends, and returns the extended
// buffer. Lines are numbered in the order they are encoded. It does not
// use the connection, so it may run while another call uses the
// transaction; it must not run concurrently with itself or with
// StageEvalSamples.
func (t *RunTx) EncodeEvalSample(dst []byte, r schema.StagedEvalSample) []byte {
	t.evalSampleSeq++
	return appendEvalSample(dst, t.evalSampleSeq, r)
}

// appendEvalSample lays a sample line out in sampleStagingColumns order.
func appendEvalSample(b []byte, seq int64, r schema.StagedEvalSample) []byte {
	be := binary.BigEndian
	b = be.AppendUint16(b, evalSampleFields)
	b = appendInt64Field(b, seq)
	b = appendBytesField(b, r.Eval[:])
	b = appendInt32Field(b, int32(r.DocID))
	b = appendTextField(b, r.Filter)
	b = appendEvalText(b, r.Doc, r.DocSent)
	b = appendEvalText(b, r.Prompt, r.PromptSent)
	b = appendEvalText(b, r.Resps, r.RespsSent)
	b = appendOptTextField(b, r.Target)
	b = appendOptTextField(b, r.Response)
	if r.Passed == nil {
		b = appendNullField(b)
	} else {
		b = be.AppendUint32(b, 1)
		if *r.Passed {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	if r.Score == nil {
		b = appendNullField(b)
	} else {
		b = be.AppendUint32(b, 8)
		b = be.AppendUint64(b, math.Float64bits(*r.Score))
	}
	b = appendJSONBField(b, r.Metrics)
	b = appendJSONBField(b, r.FilteredResps)
	b = appendJSONBField(b, r.Data)
	b = appendTextField(b, r.File)
	return appendInt32Field(b, int32(r.Line))
}

// appendEvalText appends a text's digest and, unless it was sent before,
// its content: a text is sent once, then named by its digest.
func appendEvalText(b []byte, t *schema.EvalText, sent bool) []byte {
	if t == nil {
		return appendNullField(appendNullField(b))
	}
	b = appendBytesField(b, t.Digest[:])
	if sent {
		return appendNullField(b)
	}
	return appendTextField(b, t.Content)
}

func appendNullField(b []byte) []byte { return binary.BigEndian.AppendUint32(b, math.MaxUint32) }

func appendInt64Field(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(b, 8), uint64(v))
}

func appendInt32Field(b []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(b, 4), uint32(v))
}

func appendBytesField(b, v []byte) []byte {
	return append(binary.BigEndian.AppendUint32(b, uint32(len(v))), v...)
}

// appendTextField appends s without its NUL bytes (cleanText).
func appendTextField(b []byte, s string) []byte {
	s = cleanText(s)
	return append(binary.BigEndian.AppendUint32(b, uint32(len(s))), s...)
}

func appendOptTextField(b []byte, s *string) []byte {
	if s == nil {
		return appendNullField(b)
	}
	return appendTextField(b, *s)
}

// appendJSONBField appends a JSON document as jsonb (format version 1),
// or NULL for an empty one (nilIfEmpty).
func appendJSONBField(b, v []byte) []byte {
	if len(v) == 0 {
		return appendNullField(b)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(v)+1))
	return append(append(b, 1), v...)
}

// StageEvalSamples streams sample lines into the staging table with one
// COPY: first the rows encoded beforehand by EncodeEvalSample that spooled
// holds (read to its end; nil when there are none), then the lines next
// gives, encoded as they come, until it reports no more. Parsing runs
// while PostgreSQL receives earlier lines. It returns how many lines were
// staged.
func (t *RunTx) StageEvalSamples(ctx context.Context, spooled io.Reader, next func() (schema.StagedEvalSample, bool, error)) (int64, error) {
	if !t.evalsStaged {
		return 0, fmt.Errorf("stage eval samples: StageEvals was not called")
	}
	rows := &evalSampleRows{t: t, spooled: spooled, next: next, buf: make([]byte, 0, 64<<10)}
	tag, err := t.tx.Conn().PgConn().CopyFrom(ctx, rows, evalSampleCopy)
	if err != nil {
		if rows.err != nil {
			return 0, rows.err
		}
		return 0, t.explain("stage eval samples", err)
	}
	return tag.RowsAffected(), nil
}

// evalSampleRows is the io.Reader of StageEvalSamples' COPY data: the
// header, the spooled rows, the rows of next, the trailer.
type evalSampleRows struct {
	t       *RunTx
	spooled io.Reader
	next    func() (schema.StagedEvalSample, bool, error)
	buf     []byte
	off     int
	header  bool
	done    bool
	err     error
}

// fill is how many bytes of encoded rows are gathered before they are
// handed to the COPY.
const fill = 32 << 10

func (r *evalSampleRows) Read(p []byte) (int, error) {
	for r.off == len(r.buf) {
		if r.err != nil {
			return 0, r.err
		}
		if r.done {
			return 0, io.EOF
		}
		r.buf, r.off = r.buf[:0], 0
		if !r.header {
			r.buf = append(r.buf, copyHeader...)
			r.header = true
		}
		if r.spooled != nil {
			if len(r.buf) > 0 { // send the header first
				break
			}
			n, err := r.spooled.Read(p)
			if err == io.EOF {
				r.spooled = nil
			} else if err != nil {
				r.err = fmt.Errorf("stage eval samples: read the spooled lines: %w", err)
				return 0, r.err
			}
			if n > 0 {
				return n, nil
			}
			continue
		}
		for len(r.buf) < fill {
			s, ok, err := r.next()
			if err != nil {
				r.err = err
				return 0, err
			}
			if !ok {
				r.buf = binary.BigEndian.AppendUint16(r.buf, 0xffff) // trailer
				r.done = true
				break
			}
			r.buf = r.t.EncodeEvalSample(r.buf, s)
		}
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}
