package export

import (
	"encoding/binary"
	"math"

	"github.com/inferencex/ingest/ingest/telemetry"
)

// columns buffers one row group of samples, column by column, already in
// the forms the Parquet pages take: PLAIN little-endian values of the
// rows that have one, a definition level per row for the optional
// columns, and dictionary indices for the names.
type columns struct {
	rows      int
	series    []byte
	artifact  names
	file      names
	host      names
	gpu       []byte
	sampledAt []byte
	metrics   [telemetry.NumMetrics][]byte
	defs      [telemetry.NumMetrics][]int32
}

// names is a dictionary-encoded name column of one row group. Names
// repeat for every sample of a series, so the name of the row before is
// looked up first.
type names struct {
	index   map[string]int32
	dict    []byte // PLAIN: length-prefixed bytes
	n       int
	last    string
	lastID  int32
	indices []int32
	defs    []int32 // optional columns only
}

func (c *names) add(s string) {
	if c.n == 0 || s != c.last {
		id, ok := c.index[s]
		if !ok {
			if c.index == nil {
				c.index = map[string]int32{}
			}
			id = int32(c.n)
			c.index[s] = id
			c.n++
			c.dict = binary.LittleEndian.AppendUint32(c.dict, uint32(len(s)))
			c.dict = append(c.dict, s...)
		}
		c.last, c.lastID = s, id
	}
	c.indices = append(c.indices, c.lastID)
}

func (c *names) input() chunkInput {
	return chunkInput{defs: c.defs, dict: c.dict, dictLen: c.n, indices: c.indices}
}

func (c *names) reset() {
	clear(c.index)
	c.dict, c.n, c.last, c.lastID = c.dict[:0], 0, "", 0
	c.indices, c.defs = c.indices[:0], c.defs[:0]
}

// add appends one sample.
func (c *columns) add(r *telemetry.ExportRow) {
	c.rows++
	c.series = binary.LittleEndian.AppendUint64(c.series, uint64(r.SeriesID))
	c.artifact.add(r.Artifact)
	c.file.add(r.File)
	if r.Host == "" {
		c.host.defs = append(c.host.defs, 0)
	} else {
		c.host.add(r.Host)
		c.host.defs = append(c.host.defs, 1)
	}
	c.gpu = binary.LittleEndian.AppendUint32(c.gpu, uint32(int32(r.GPU)))
	c.sampledAt = binary.LittleEndian.AppendUint64(c.sampledAt, uint64(r.SampledAt))
	for i := range c.metrics {
		if r.Valid[i] {
			c.metrics[i] = binary.LittleEndian.AppendUint32(c.metrics[i], math.Float32bits(r.Metrics[i]))
			c.defs[i] = append(c.defs[i], 1)
		} else {
			c.defs[i] = append(c.defs[i], 0)
		}
	}
}

// flush writes the buffered rows as one row group, in the order of
// telemetryColumns, and empties the buffers for the next.
func (c *columns) flush(pw *pqWriter) error {
	if c.rows == 0 {
		return nil
	}
	in := []chunkInput{
		{plain: c.series},
		c.artifact.input(),
		c.file.input(),
		c.host.input(),
		{plain: c.gpu},
		{plain: c.sampledAt},
	}
	for i := range c.metrics {
		in = append(in, chunkInput{defs: c.defs[i], plain: c.metrics[i]})
	}
	if err := pw.writeRowGroup(c.rows, in); err != nil {
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
