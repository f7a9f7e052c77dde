package export

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/thrift/lib/go/thrift"
	"github.com/klauspost/compress/snappy"
)

// This file writes the Parquet container (https://parquet.apache.org/docs/
// file-format/): "PAR1", then per row group one column chunk per column —
// an optional dictionary page and one v1 data page, snappy-compressed —
// then the Thrift footer and "PAR1". It writes flat schemas only (no
// repetition), which is all the export needs.

const (
	parquetMagic = "PAR1"
	// codecSnappy is CompressionCodec.SNAPPY of parquet.thrift.
	codecSnappy = 1
	// PageType of parquet.thrift.
	pageData       = 0
	pageDictionary = 2
	// fileVersion is FileMetaData.version: 2 (dictionary data pages are
	// RLE_DICTIONARY).
	fileVersion = 2
	createdBy   = "inferencex ingest export (parquet-format 2.6)"
)

// pqColumn is one leaf column of a flat schema.
type pqColumn struct {
	name      string
	typ       parquet.Type
	optional  bool
	converted schema.ConvertedType // schema.ConvertedTypes.None for none
	logical   func(t *thriftOut)   // writes the member of the LogicalType union, or nil
	dict      bool                 // byte arrays written through a dictionary
}

// pqChunk is what the footer records of one written column chunk.
type pqChunk struct {
	values       int64 // rows, nulls included
	dictOffset   int64 // -1 without a dictionary page
	dataOffset   int64
	compressed   int64 // page headers included, as the format counts
	uncompressed int64
}

type pqRowGroup struct {
	rows   int64
	chunks []pqChunk
}

// pqWriter writes one Parquet file to w.
type pqWriter struct {
	ctx    context.Context
	w      io.Writer
	off    int64
	cols   []pqColumn
	groups []pqRowGroup
	meta   [][2]string // key-value metadata of the footer
	// scratch buffers, reused from page to page
	body, comp []byte
}

func newPQWriter(ctx context.Context, w io.Writer, cols []pqColumn, meta [][2]string) (*pqWriter, error) {
	pw := &pqWriter{ctx: ctx, w: w, cols: cols, meta: meta}
	return pw, pw.write([]byte(parquetMagic))
}

func (pw *pqWriter) write(b []byte) error {
	n, err := pw.w.Write(b)
	pw.off += int64(n)
	return err
}

// chunkInput is one column of a row group, encoded by the caller:
// definition levels (optional columns only; 1 present, 0 null), and
// either the PLAIN-encoded present values or, for dictionary columns,
// the dictionary (PLAIN-encoded, dictLen entries) and an index per
// present value.
type chunkInput struct {
	defs    []int32
	plain   []byte
	dict    []byte
	dictLen int
	indices []int32
}

// writeRowGroup writes one row group of rows rows: in[i] is column i.
func (pw *pqWriter) writeRowGroup(rows int, in []chunkInput) error {
	if len(in) != len(pw.cols) {
		return fmt.Errorf("parquet: row group of %d columns, schema has %d", len(in), len(pw.cols))
	}
	rg := pqRowGroup{rows: int64(rows)}
	for i, c := range pw.cols {
		ch, err := pw.writeChunk(c, rows, in[i])
		if err != nil {
			return fmt.Errorf("parquet column %s: %w", c.name, err)
		}
		rg.chunks = append(rg.chunks, ch)
	}
	pw.groups = append(pw.groups, rg)
	return nil
}

func (pw *pqWriter) writeChunk(c pqColumn, rows int, in chunkInput) (pqChunk, error) {
	ch := pqChunk{values: int64(rows), dictOffset: -1}
	if c.dict {
		ch.dictOffset = pw.off
		comp, uncomp, err := pw.writePage(pageDictionary, in.dictLen, parquet.Encodings.Plain, in.dict)
		if err != nil {
			return ch, err
		}
		ch.compressed += comp
		ch.uncompressed += uncomp
	}
	body := pw.body[:0]
	if c.optional {
		// The levels' byte length, then the levels (bit width 1).
		at := len(body)
		body = append(body, 0, 0, 0, 0)
		body = appendRLE(body, in.defs, 1)
		binary.LittleEndian.PutUint32(body[at:], uint32(len(body)-at-4))
	}
	enc := parquet.Encodings.Plain
	if c.dict {
		enc = parquet.Encodings.RLEDict
		w := bitWidth(in.dictLen)
		body = append(body, byte(w))
		body = appendRLE(body, in.indices, w)
	} else {
		body = append(body, in.plain...)
	}
	pw.body = body
	ch.dataOffset = pw.off
	comp, uncomp, err := pw.writePage(pageData, rows, enc, body)
	if err != nil {
		return ch, err
	}
	ch.compressed += comp
	ch.uncompressed += uncomp
	return ch, nil
}

// writePage compresses body and writes it behind its page header. It
// returns the page's compressed and uncompressed sizes, header included.
func (pw *pqWriter) writePage(pageType int32, values int, enc parquet.Encoding, body []byte) (int64, int64, error) {
	pw.comp = snappy.Encode(pw.comp[:cap(pw.comp)], body)
	t := newThriftOut(pw.ctx)
	t.begin()
	t.i32(1, pageType)
	t.i32(2, int32(len(body)))
	t.i32(3, int32(len(pw.comp)))
	if pageType == pageDictionary {
		t.strct(7) // DictionaryPageHeader
		t.i32(1, int32(values))
		t.i32(2, int32(enc))
		t.end()
	} else {
		t.strct(5) // DataPageHeader
		t.i32(1, int32(values))
		t.i32(2, int32(enc))
		t.i32(3, int32(parquet.Encodings.RLE)) // definition levels
		t.i32(4, int32(parquet.Encodings.RLE)) // repetition levels (none)
		t.end()
	}
	t.end()
	header, err := t.bytes()
	if err != nil {
		return 0, 0, fmt.Errorf("page header: %w", err)
	}
	if err := pw.write(header); err != nil {
		return 0, 0, err
	}
	if err := pw.write(pw.comp); err != nil {
		return 0, 0, err
	}
	return int64(len(header) + len(pw.comp)), int64(len(header) + len(body)), nil
}

// close writes the footer: the file's metadata, its length and the magic.
func (pw *pqWriter) close() error {
	t := newThriftOut(pw.ctx)
	t.begin()
	t.i32(1, fileVersion)
	t.list(2, thrift.STRUCT, len(pw.cols)+1)
	t.begin() // the root
	t.str(4, "schema")
	t.i32(5, int32(len(pw.cols)))
	t.end()
	for _, c := range pw.cols {
		pw.schemaElement(t, c)
	}
	var rows int64
	for _, g := range pw.groups {
		rows += g.rows
	}
	t.i64(3, rows)
	t.list(4, thrift.STRUCT, len(pw.groups))
	for _, g := range pw.groups {
		pw.rowGroup(t, g)
	}
	if len(pw.meta) > 0 {
		t.list(5, thrift.STRUCT, len(pw.meta))
		for _, kv := range pw.meta {
			t.begin()
			t.str(1, kv[0])
			t.str(2, kv[1])
			t.end()
		}
	}
	t.str(6, createdBy)
	t.end()
	footer, err := t.bytes()
	if err != nil {
		return fmt.Errorf("parquet footer: %w", err)
	}
	if err := pw.write(footer); err != nil {
		return err
	}
	if err := pw.write(binary.LittleEndian.AppendUint32(nil, uint32(len(footer)))); err != nil {
		return err
	}
	return pw.write([]byte(parquetMagic))
}

func (pw *pqWriter) schemaElement(t *thriftOut, c pqColumn) {
	t.begin()
	t.i32(1, int32(c.typ))
	rep := parquet.Repetitions.Required
	if c.optional {
		rep = parquet.Repetitions.Optional
	}
	t.i32(3, int32(rep))
	t.str(4, c.name)
	if c.converted != schema.ConvertedTypes.None {
		t.i32(6, int32(c.converted))
	}
	if c.logical != nil {
		t.strct(10) // LogicalType
		c.logical(t)
		t.end()
	}
	t.end()
}

func (pw *pqWriter) rowGroup(t *thriftOut, g pqRowGroup) {
	t.begin()
	t.list(1, thrift.STRUCT, len(g.chunks))
	var size, compressed int64
	for i, ch := range g.chunks {
		c := pw.cols[i]
		start := ch.dataOffset
		if ch.dictOffset >= 0 {
			start = ch.dictOffset
		}
		t.begin() // ColumnChunk
		t.i64(2, start)
		t.strct(3) // ColumnMetaData
		t.i32(1, int32(c.typ))
		encodings := []parquet.Encoding{parquet.Encodings.Plain, parquet.Encodings.RLE}
		if c.dict {
			encodings = append(encodings, parquet.Encodings.RLEDict)
		}
		t.list(2, thrift.I32, len(encodings))
		for _, e := range encodings {
			t.i32Elem(int32(e))
		}
		t.list(3, thrift.STRING, 1)
		t.strElem(c.name)
		t.i32(4, codecSnappy)
		t.i64(5, ch.values)
		t.i64(6, ch.uncompressed)
		t.i64(7, ch.compressed)
		t.i64(9, ch.dataOffset)
		if ch.dictOffset >= 0 {
			t.i64(11, ch.dictOffset)
		}
		t.end()
		t.end()
		size += ch.uncompressed
		compressed += ch.compressed
	}
	t.i64(2, size)
	t.i64(3, g.rows)
	t.i64(6, compressed)
	t.end()
}

// Members of parquet.thrift's LogicalType union.
func logicalString(t *thriftOut) {
	t.strct(1) // StringType
	t.end()
}

func logicalInt(bits int8) func(t *thriftOut) {
	return func(t *thriftOut) {
		t.strct(10) // IntType
		t.byte(1, bits)
		t.bool(2, true)
		t.end()
	}
}

func logicalTimestampMicrosUTC(t *thriftOut) {
	t.strct(8) // TimestampType
	t.bool(1, true)
	t.strct(2) // TimeUnit
	t.strct(2) // MICROS
	t.end()
	t.end()
	t.end()
}
