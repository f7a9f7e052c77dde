package telemetry

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/inferencex/ingest/schema"
)

// DefaultChunk is the number of samples per record batch of a GPU.
const DefaultChunk = 8192

// Options tune one Parse.
type Options struct {
	// Mem allocates every Arrow buffer; nil means memory.DefaultAllocator.
	Mem memory.Allocator
	// Chunk is the number of samples per batch kept (per GPU).
	Chunk int
	// UTCOffset is the collector's offset from UTC: nvidia-smi and naive
	// ISO timestamps are local wall-clock times, UTC = local − offset.
	UTCOffset time.Duration
	// Window, when known, is the benchmark window the facts integrate over.
	Window *Window
	// NotAfter, when not zero, is the latest plausible sample time in
	// microseconds since the epoch (the ingest passes its clock plus a
	// day): a later sample fails the file.
	NotAfter int64
}

// Window is a benchmark window in microseconds since the Unix epoch.
type Window struct {
	Start, End int64
	Source     string
}

// ParseError is a malformed CSV: the reason and, where it is known, the
// line (1-based, the header is line 1).
type ParseError struct {
	Line   int64
	Reason string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
	}
	return e.Reason
}

func parseErr(line int64, format string, args ...any) error {
	return &ParseError{Line: line, Reason: fmt.Sprintf(format, args...)}
}

// Parse reads one telemetry CSV. It returns one series (a DCGM samples.csv:
// one per host, in host order) or an error; on error nothing is returned
// and every buffer is released. Rows whose power is a sentinel ("[N/A]",
// "N/A", empty) are dropped and counted, a repeated (GPU, timestamp) keeps
// its first row; a bad header (or one naming a column twice), a ragged
// row, a non-numeric, non-finite or impossible power, a bad or impossible
// timestamp (see MinSampleTime), a bad GPU index or a hostname that is not
// clean UTF-8 fail the file (values.go says what is a sentinel and what
// is invalid).
func Parse(r io.Reader, opt Options) (series []*Series, err error) {
	if opt.Mem == nil {
		opt.Mem = memory.DefaultAllocator
	}
	if opt.Chunk <= 0 {
		opt.Chunk = DefaultChunk
	}
	br := bufio.NewReaderSize(r, 256<<10)
	header, err := br.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read header: %w", err)
	}
	header = strings.TrimRight(header, "\r\n")
	if strings.TrimSpace(header) == "" {
		return nil, &ParseError{Reason: "empty telemetry file (no header)"}
	}
	l, err := parseHeader(header)
	if err != nil {
		return nil, &ParseError{Line: 1, Reason: err.Error()}
	}
	c := newConverter(l, opt)
	defer func() {
		if err != nil {
			c.release()
		}
	}()
	rdr := newRowReader(br, len(l.columns))
	for {
		rec, line, rerr := rdr.Read()
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return nil, csvError(rerr, len(rec), len(l.columns))
		}
		// The reader starts after the header: its line 1 is file line 2.
		if cerr := c.add(rec, int64(line)+1); cerr != nil {
			return nil, cerr
		}
	}
	return c.finish()
}

// csvError names the line of a CSV read error; a ragged row (fields
// given, the header's count want) says how many fields it has.
func csvError(err error, fields, want int) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		// The reader starts after the header: its line 1 is file line 2.
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return parseErr(int64(pe.Line)+1, "row has %d fields, the header %d", fields, want)
		}
		return parseErr(int64(pe.Line)+1, "%v", pe.Err)
	}
	return &ParseError{Reason: fmt.Sprintf("read: %v", err)}
}

// converter turns CSV rows into canonical sample batches, one builder per
// host.
type converter struct {
	l     *layout
	opt   Options
	hosts map[string]*seriesBuilder
	one   *seriesBuilder
	// cur is the builder of the DCGM row before (rows come host by host)
	cur *seriesBuilder
	// the file's first sample time and its line (firstLine 0: none yet)
	first, firstLine int64
	// num holds the row's numeric cells (amd-smi, DCGM), null[i] when
	// cell i is a sentinel.
	num  []float64
	null []bool
}

// checkTime fails a sample time that is impossible: before MinSampleTime,
// after Options.NotAfter, or further than MaxSpan from the file's first
// sample.
func (c *converter) checkTime(line, us int64) error {
	if us < MinSampleTime {
		return parseErr(line, "impossible timestamp %s (before %s)", fmtMicros(us), fmtMicros(MinSampleTime))
	}
	if c.opt.NotAfter != 0 && us > c.opt.NotAfter {
		return parseErr(line, "impossible timestamp %s (after %s, a day past the ingest)", fmtMicros(us), fmtMicros(c.opt.NotAfter))
	}
	if c.firstLine == 0 {
		c.first, c.firstLine = us, line
		return nil
	}
	if d := us - c.first; d > MaxSpan.Microseconds() || -d > MaxSpan.Microseconds() {
		return parseErr(line, "impossible timestamp %s (more than %v from the first sample, line %d: %s)",
			fmtMicros(us), MaxSpan, c.firstLine, fmtMicros(c.first))
	}
	return nil
}

func newConverter(l *layout, opt Options) *converter {
	return &converter{l: l, opt: opt, hosts: map[string]*seriesBuilder{},
		num: make([]float64, len(l.columns)), null: make([]bool, len(l.columns))}
}

func (c *converter) builder(host string) *seriesBuilder {
	if c.l.format != FormatDCGM {
		if c.one == nil {
			c.one = newSeriesBuilder(c.opt, "")
		}
		return c.one
	}
	b := c.hosts[host]
	if b == nil {
		b = newSeriesBuilder(c.opt, strings.Clone(host))
		c.hosts[b.host] = b
	}
	return b
}

func (c *converter) release() {
	if c.one != nil {
		c.one.release()
	}
	for _, b := range c.hosts {
		b.release()
	}
}

func (c *converter) finish() ([]*Series, error) {
	var bs []*seriesBuilder
	if c.one != nil {
		bs = append(bs, c.one)
	}
	bs = append(bs, sortedHosts(c.hosts)...)
	if len(bs) == 0 {
		return nil, &ParseError{Reason: "no usable power samples (header only, or every power value is a sentinel)"}
	}
	out := make([]*Series, 0, len(bs))
	for _, b := range bs {
		s, err := b.finish(c.l)
		if err != nil {
			ReleaseAll(out)
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// add converts one row of file line line.
func (c *converter) add(rec []string, line int64) error {
	switch c.l.format {
	case FormatNVIDIASMI:
		return c.addNVIDIA(rec, line)
	case FormatAMDSMI:
		return c.addAMD(rec, line)
	default:
		return c.addDCGM(rec, line)
	}
}

// nullCell: a cell that holds no value ("N/A" and "[N/A]" are the
// collectors' sentinels).
func nullCell(s string) bool { return s == "" || s == "N/A" || s == "[N/A]" }

// numbers reads the row's numeric cells (the columns the layout reads as
// numbers), as written: a sentinel is null, anything else must parse.
func (c *converter) numbers(rec []string, line int64) error {
	for i, col := range c.l.columns {
		if !col.numeric {
			continue
		}
		if c.null[i] = nullCell(rec[i]); c.null[i] {
			continue
		}
		v, err := strconv.ParseFloat(rec[i], 64)
		if err != nil {
			return parseErr(line, "invalid number: %v", err)
		}
		c.num[i] = v
	}
	return nil
}

func (c *converter) addNVIDIA(rec []string, line int64) error {
	l := c.l
	b := c.builder("")
	var vals [NumMetrics]float32
	var valid [NumMetrics]bool
	ts := rec[l.time]
	if nullCell(ts) {
		return parseErr(line, "empty timestamp")
	}
	t, ok := parseNVIDIATime(ts)
	if !ok {
		return parseErr(line, "invalid timestamp %q", clip(strings.TrimSpace(ts)))
	}
	gpu := rec[l.gpu]
	if nullCell(gpu) {
		return parseErr(line, "empty GPU index")
	}
	g, ok := parseGPUIndex(gpu)
	if !ok {
		return parseErr(line, "invalid GPU index %q", clip(strings.TrimSpace(gpu)))
	}
	t -= c.opt.UTCOffset.Microseconds()
	if err := c.checkTime(line, t); err != nil {
		return err
	}
	for m, i := range l.metricCol {
		if i < 0 || nullCell(rec[i]) {
			continue
		}
		cell := rec[i]
		v, st := parseUnitFloat(cell)
		if m != MetricPower && (st == cellNonFinite || st == cellOK && !fitsReal(v)) {
			return outOfRange(line, l.metricHeader[m], strings.TrimSpace(cell))
		}
		if m != MetricPower && st == cellBad {
			// Text that is neither a number nor a sentinel is never
			// stored as "no value".
			return parseErr(line, "field %s: %q is not a number", l.metricHeader[m], clip(strings.TrimSpace(cell)))
		}
		if m == MetricPower {
			switch st {
			case cellBad:
				return parseErr(line, "non-numeric power %q", clip(strings.TrimSpace(cell)))
			case cellNonFinite:
				return parseErr(line, "non-finite power %q", clip(strings.TrimSpace(cell)))
			case cellOK:
				if why := checkPower(v); why != "" {
					return parseErr(line, "%s", why)
				}
			}
		}
		if st == cellOK {
			vals[m], valid[m] = float32(v), true
		}
	}
	return b.append(line, g, t, &vals, &valid)
}

func (c *converter) addAMD(rec []string, line int64) error {
	l := c.l
	if err := c.numbers(rec, line); err != nil {
		return err
	}
	ts := rec[l.time]
	if nullCell(ts) {
		return parseErr(line, "empty timestamp")
	}
	t, ok := parseEpochOrISO(ts, c.opt.UTCOffset)
	if !ok {
		return parseErr(line, "invalid timestamp %q", clip(strings.TrimSpace(ts)))
	}
	if c.null[l.gpu] {
		return parseErr(line, "empty GPU index")
	}
	g, ok := floatGPUIndex(c.num[l.gpu])
	if !ok {
		return parseErr(line, "invalid GPU index %v", c.num[l.gpu])
	}
	if err := c.checkTime(line, t); err != nil {
		return err
	}
	var vals [NumMetrics]float32
	var valid [NumMetrics]bool
	if err := c.metrics(line, &vals, &valid); err != nil {
		return err
	}
	if h := l.hotspot; h >= 0 && !c.null[h] {
		if !fitsReal(c.num[h]) {
			return outOfRange(line, l.columns[h].name, formatFloat(c.num[h]))
		}
		vals[MetricTemperature], valid[MetricTemperature] = float32(c.num[h]), true
	} else if valid[MetricEdgeTemp] {
		vals[MetricTemperature], valid[MetricTemperature] = vals[MetricEdgeTemp], true
	}
	return c.builder("").append(line, g, t, &vals, &valid)
}

// dcgmBlank is DCGM's blank sentinel for integer fields.
const dcgmBlank = 2147483632

func (c *converter) addDCGM(rec []string, line int64) error {
	l := c.l
	if err := c.numbers(rec, line); err != nil {
		return err
	}
	ts := c.num[l.time]
	if c.null[l.time] || !schema.Finite(ts) || ts <= 1e9 {
		return parseErr(line, "invalid timestamp_unix")
	}
	if ts >= 1e12 { // past year 33000: not seconds, and no microsecond count
		return parseErr(line, "impossible timestamp_unix %v", ts)
	}
	if c.null[l.gpu] {
		return parseErr(line, "empty gpu_index")
	}
	g, ok := floatGPUIndex(c.num[l.gpu])
	if !ok {
		return parseErr(line, "invalid gpu_index %v", c.num[l.gpu])
	}
	host := rec[l.host]
	if nullCell(host) || strings.TrimSpace(host) == "" {
		return parseErr(line, "empty hostname")
	}
	h := strings.TrimSpace(host)
	b := c.cur
	if b == nil || b.host != h {
		// The host names a series in the database: it must be text
		// PostgreSQL can store.
		if why := TextProblem(h); why != "" {
			return parseErr(line, "hostname %q: %s", clip(h), why)
		}
		b = c.builder(h)
		c.cur = b
	}
	us := roundInt(ts*1000) * 1000
	if err := c.checkTime(line, us); err != nil {
		return err
	}
	var vals [NumMetrics]float32
	var valid [NumMetrics]bool
	if err := c.metrics(line, &vals, &valid); err != nil {
		return err
	}
	if valid[MetricTemperature] && (vals[MetricTemperature] >= dcgmBlank || vals[MetricTemperature] < -273.15) {
		valid[MetricTemperature] = false
	}
	if l.uuid >= 0 && valid[MetricPower] {
		b.noteUUID(g, rec[l.uuid])
	}
	return b.append(line, g, us, &vals, &valid)
}

// metrics reads the metrics of an amd-smi or DCGM row from its numeric
// cells: a sentinel is null; the power must be finite and possible, every
// other metric must fit its real column (values.go).
func (c *converter) metrics(line int64, vals *[NumMetrics]float32, valid *[NumMetrics]bool) error {
	for m, i := range c.l.metricCol {
		if i < 0 || c.null[i] {
			continue
		}
		v := c.num[i]
		if m == MetricPower {
			if why := checkPower(v); why != "" {
				return parseErr(line, "%s", why)
			}
		}
		if !fitsReal(v) {
			return outOfRange(line, c.l.metricHeader[m], formatFloat(v))
		}
		vals[m], valid[m] = float32(v), true
	}
	return nil
}

// outOfRange fails a line whose value does not fit its column. raw is the
// cell as written (nvidia-smi), or the number as parsed (amd-smi and DCGM
// cells are parsed by the CSV reader: "1e308" shows as 1e+308).
func outOfRange(line int64, header, raw string) error {
	return parseErr(line, "field %s out of range (%s)", header, clip(raw))
}
