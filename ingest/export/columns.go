package export

import (
	"fmt"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/inferencex/ingest/ingest/telemetry"
)

// columns buffers one row group of samples, column by column, in the
// forms arrow-go's column writers take: the values of the rows that have
// one, and a definition level per row for the optional columns.
type columns struct {
	rows      int
	series    []int64
	artifact  names
	file      names
	host      names
	gpu       []int32
	sampledAt []int64
	metrics   [telemetry.NumMetrics][]float32
	defs      [telemetry.NumMetrics][]int16
}

// names is a name column of one row group. Names repeat for every sample
// of a series, so the bytes of the row before are reused (the writer
// dictionary-encodes the column).
type names struct {
	values []parquet.ByteArray
	defs   []int16 // optional columns only
	last   string
	bytes  parquet.ByteArray
	has    bool
}

func (c *names) add(s string) {
	if !c.has || s != c.last {
		c.last, c.bytes, c.has = s, parquet.ByteArray(s), true
	}
	c.values = append(c.values, c.bytes)
}

func (c *names) reset() {
	clear(c.values)
	c.values, c.defs = c.values[:0], c.defs[:0]
}

// add appends one sample.
func (c *columns) add(r *telemetry.ExportRow) {
	c.rows++
	c.series = append(c.series, r.SeriesID)
	c.artifact.add(r.Artifact)
	c.file.add(r.File)
	if r.Host == "" {
		c.host.defs = append(c.host.defs, 0)
	} else {
		c.host.add(r.Host)
		c.host.defs = append(c.host.defs, 1)
	}
	c.gpu = append(c.gpu, int32(r.GPU))
	c.sampledAt = append(c.sampledAt, r.SampledAt)
	for i := range c.metrics {
		if r.Valid[i] {
			c.metrics[i] = append(c.metrics[i], r.Metrics[i])
			c.defs[i] = append(c.defs[i], 1)
		} else {
			c.defs[i] = append(c.defs[i], 0)
		}
	}
}

// flush writes the buffered rows as one row group, in the order of
// telemetryParquetSchema, and empties the buffers for the next.
func (c *columns) flush(w *file.Writer) error {
	if c.rows == 0 {
		return nil
	}
	rg, err := w.AppendRowGroupChecked()
	if err != nil {
		return err
	}
	writes := []func(file.ColumnChunkWriter) error{
		int64s(c.series),
		byteArrays(c.artifact.values, nil),
		byteArrays(c.file.values, nil),
		byteArrays(c.host.values, c.host.defs),
		int32s(c.gpu),
		int64s(c.sampledAt),
	}
	for i := range c.metrics {
		writes = append(writes, float32s(c.metrics[i], c.defs[i]))
	}
	for _, write := range writes {
		cw, err := rg.NextColumn()
		if err != nil {
			return err
		}
		if err := write(cw); err != nil {
			return fmt.Errorf("column %s: %w", cw.Descr().Name(), err)
		}
		if err := cw.Close(); err != nil {
			return fmt.Errorf("column %s: %w", cw.Descr().Name(), err)
		}
	}
	if err := rg.Close(); err != nil {
		return err
	}
	c.rows = 0
	c.series, c.gpu, c.sampledAt = c.series[:0], c.gpu[:0], c.sampledAt[:0]
	c.artifact.reset()
	c.file.reset()
	c.host.reset()
	for i := range c.metrics {
		c.metrics[i], c.defs[i] = c.metrics[i][:0], c.defs[i][:0]
	}
	return nil
}

func int64s(v []int64) func(file.ColumnChunkWriter) error {
	return func(cw file.ColumnChunkWriter) error {
		_, err := cw.(*file.Int64ColumnChunkWriter).WriteBatch(v, nil, nil)
		return err
	}
}

func int32s(v []int32) func(file.ColumnChunkWriter) error {
	return func(cw file.ColumnChunkWriter) error {
		_, err := cw.(*file.Int32ColumnChunkWriter).WriteBatch(v, nil, nil)
		return err
	}
}

func byteArrays(v []parquet.ByteArray, defs []int16) func(file.ColumnChunkWriter) error {
	return func(cw file.ColumnChunkWriter) error {
		_, err := cw.(*file.ByteArrayColumnChunkWriter).WriteBatch(v, defs, nil)
		return err
	}
}

func float32s(v []float32, defs []int16) func(file.ColumnChunkWriter) error {
	return func(cw file.ColumnChunkWriter) error {
		_, err := cw.(*file.Float32ColumnChunkWriter).WriteBatch(v, defs, nil)
		return err
	}
}
