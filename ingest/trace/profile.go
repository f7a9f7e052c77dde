package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/inferencex/ingest/ingest/strictjson"
)

// maxLine bounds one profile record; a longer line is an error, not an
// allocation.
const maxLine = 64 << 20

// Accounting counts the records of a profile export: all of them, the
// profiled requests, those dropped as warmup or as errors, and the errors
// by category.
type Accounting struct {
	Total           int64            `json:"recordsTotal"`
	Profiled        int64            `json:"recordsProfiled"`
	WarmupDropped   int64            `json:"recordsWarmupDropped"`
	ErrorDropped    int64            `json:"recordsErrorDropped"`
	ErrorCategories map[string]int64 `json:"errorCategories"`
}

// Request is one record of the request timeline, as written. Times are
// milliseconds from the profile's first request start.
type Request struct {
	CID       string  `json:"cid"`
	TI        int32   `json:"ti"`
	WID       string  `json:"wid,omitempty"`
	Phase     string  `json:"phase"`
	Start     float64 `json:"start"`
	Ack       float64 `json:"ack,omitempty"`
	End       float64 `json:"end"`
	TTFTMs    float32 `json:"ttftMs,omitempty"`
	TPOTMs    float32 `json:"tpotMs,omitempty"`
	ISL       int32   `json:"isl"`
	OSL       int32   `json:"osl"`
	Cancelled bool    `json:"cancelled,omitempty"`
	Err       string  `json:"err,omitempty"`
}

// req is how a record is kept until the timeline is written: 64 bytes,
// names as indexes into the profile's name table.
type req struct {
	startNs, ackNs, endNs int64
	ttftMs, tpotMs        float32
	isl, osl, ti          int32
	cid, wid, phase, err  uint32
	cancelled, kept       bool
}

// reqBlock is how many records one block holds: the timeline grows block by
// block, never by copying what it holds.
const reqBlock = 4096

// Profile is what one pass over profile_export.jsonl yields.
type Profile struct {
	Accounting Accounting
	StartNs    int64
	EndNs      int64
	blocks     [][]req
	// Distributions over kept records (profiling phase, no error), in
	// seconds or tokens.
	isl, osl, ttft, e2el, itl, fullResponseITL, reconstructedITL, e2elPerOSL []float64
	// names holds every conversation, worker, phase and error name once.
	names   []string
	nameIdx map[string]uint32
}

func (p *Profile) name(s string) uint32 {
	if i, ok := p.nameIdx[s]; ok {
		return i
	}
	i := uint32(len(p.names))
	p.names = append(p.names, s)
	p.nameIdx[s] = i
	return i
}

func (p *Profile) push(r req) {
	if n := len(p.blocks); n == 0 || len(p.blocks[n-1]) == reqBlock {
		p.blocks = append(p.blocks, make([]req, 0, reqBlock))
	}
	last := &p.blocks[len(p.blocks)-1]
	*last = append(*last, r)
}

// each calls fn for every record in file order.
func (p *Profile) each(fn func(r *req)) {
	for _, b := range p.blocks {
		for i := range b {
			fn(&b[i])
		}
	}
}

// Requests is the number of records kept for the timeline.
func (p *Profile) Requests() int {
	n := 0
	for _, b := range p.blocks {
		n += len(b)
	}
	return n
}

type number float64

// UnmarshalJSON accepts a bare number or a {"value": n, "unit": …} object.
func (n *number) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] == 'n' {
		*n = number(math.NaN())
		return nil
	}
	if b[0] == '{' {
		var v struct {
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		if len(v.Value) == 0 || v.Value[0] != '-' && (v.Value[0] < '0' || v.Value[0] > '9') {
			*n = number(math.NaN())
			return nil
		}
		f, err := strconv.ParseFloat(string(v.Value), 64)
		*n = number(f)
		return err
	}
	if b[0] == '"' || b[0] == '[' || b[0] == 't' || b[0] == 'f' {
		*n = number(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	*n = number(f)
	return err
}

// nanos is an epoch-nanosecond timestamp written as an integer or float.
type nanos int64

func (t *nanos) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		return nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		*t = nanos(v)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !finite(f) {
		return fmt.Errorf("timestamp %s is not a number", s)
	}
	*t = nanos(int64(f))
	return nil
}

type record struct {
	Metadata struct {
		Phase          *string `json:"benchmark_phase"`
		Start          nanos   `json:"request_start_ns"`
		Ack            nanos   `json:"request_ack_ns"`
		End            nanos   `json:"request_end_ns"`
		ConversationID string  `json:"conversation_id"`
		TurnIndex      int     `json:"turn_index"`
		WorkerID       string  `json:"worker_id"`
		WasCancelled   bool    `json:"was_cancelled"`
	} `json:"metadata"`
	Metrics recordMetrics   `json:"metrics"`
	Error   json.RawMessage `json:"error"`
}

type recordMetrics struct {
	ISL             *number `json:"input_sequence_length"`
	OSL             *number `json:"output_sequence_length"`
	TTFT            *number `json:"time_to_first_token"`
	Latency         *number `json:"request_latency"`
	ITL             *number `json:"inter_token_latency"`
	FullResponseITL *number `json:"full_response_inter_token_latency"`
}

// empty reports a record that holds none of the fields the aggregator
// consumes ({}, {"metadata": {}}, nulls): it is no request, and counting
// it would inflate the profiled requests.
func (r *record) empty() bool {
	md, m := &r.Metadata, &r.Metrics
	return md.Phase == nil && md.Start == 0 && md.Ack == 0 && md.End == 0 && md.ConversationID == "" &&
		m.ISL == nil && m.OSL == nil && m.TTFT == nil && m.Latency == nil && m.ITL == nil && m.FullResponseITL == nil &&
		errorCategory(r.Error) == ""
}

// checkRange refuses a metric no real request has: a finite value beyond
// float32's range (the timeline keeps times as float32, the statistics
// would overflow).
func (m *recordMetrics) checkRange() error {
	for _, f := range []struct {
		name string
		n    *number
	}{{"input_sequence_length", m.ISL}, {"output_sequence_length", m.OSL}, {"time_to_first_token", m.TTFT},
		{"request_latency", m.Latency}, {"inter_token_latency", m.ITL}, {"full_response_inter_token_latency", m.FullResponseITL}} {
		if v, ok := val(f.n); ok && math.Abs(v) > math.MaxFloat32 {
			return fmt.Errorf("metrics.%s: %g is out of range", f.name, v)
		}
	}
	return nil
}

func val(n *number) (float64, bool) {
	if n == nil {
		return 0, false
	}
	v := float64(*n)
	return v, finite(v)
}

// ReadProfile reads profile_export.jsonl in one pass. Blank lines are
// ignored; a line that is not a JSON object is an error naming the line.
func ReadProfile(r io.Reader) (*Profile, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	p := &Profile{Accounting: Accounting{ErrorCategories: map[string]int64{}}, StartNs: math.MaxInt64, EndNs: math.MinInt64,
		nameIdx: map[string]uint32{}}
	var long []byte
	var chk strictjson.Checker
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
				if len(long) > maxLine {
					return nil, fmt.Errorf("line %d: longer than %d bytes", lineNo, maxLine)
				}
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if perr := p.add(&chk, t); perr != nil {
				if err == io.EOF {
					return nil, fmt.Errorf("line %d (last, no newline): %v: the file looks truncated", lineNo, perr)
				}
				return nil, fmt.Errorf("line %d: %v", lineNo, perr)
			}
		}
		if err == io.EOF {
			break
		}
	}
	if p.Accounting.Total == 0 {
		return nil, errors.New("no records")
	}
	p.finish()
	return p, nil
}

func (p *Profile) add(chk *strictjson.Checker, line []byte) error {
	if line[0] != '{' {
		return errors.New("not a JSON object")
	}
	if err := chk.Check(line); err != nil {
		return err
	}
	var rec record
	if err := json.Unmarshal(line, &rec); err != nil {
		return err
	}
	if rec.empty() {
		return errors.New("empty record: no benchmark_phase, request timestamps, conversation_id, metrics or error")
	}
	if err := rec.Metrics.checkRange(); err != nil {
		return err
	}
	a := &p.Accounting
	a.Total++
	md := rec.Metadata
	warmup := md.Phase != nil && *md.Phase != "profiling"
	errCat := errorCategory(rec.Error)
	if warmup {
		a.WarmupDropped++
	}
	if errCat != "" {
		a.ErrorDropped++
		a.ErrorCategories[errCat]++
	}
	kept := !warmup && errCat == ""
	if kept {
		a.Profiled++
	}
	phase := "profiling"
	if warmup {
		phase = *md.Phase
	}
	req := req{cid: p.name(clean(md.ConversationID)), ti: int32(md.TurnIndex), wid: p.name(clean(md.WorkerID)),
		phase: p.name(clean(phase)), cancelled: md.WasCancelled, err: p.name(errCat),
		startNs: int64(md.Start), ackNs: int64(md.Ack), endNs: int64(md.End), kept: kept}
	if v, ok := val(rec.Metrics.ISL); ok {
		req.isl = int32(min(max(v, 0), math.MaxInt32))
	}
	if v, ok := val(rec.Metrics.OSL); ok {
		req.osl = int32(min(max(v, 0), math.MaxInt32))
	}
	ttft, hasTTFT := val(rec.Metrics.TTFT)
	if hasTTFT {
		req.ttftMs = float32(ttft)
	}
	itl, hasITL := val(rec.Metrics.ITL)
	if hasITL {
		req.tpotMs = float32(itl)
	}
	if req.startNs > 0 && req.startNs < p.StartNs {
		p.StartNs = req.startNs
	}
	if req.endNs > 0 && req.endNs > p.EndNs {
		p.EndNs = req.endNs
	}
	p.push(req)
	if !kept {
		return nil
	}
	if v, ok := val(rec.Metrics.ISL); ok {
		p.isl = append(p.isl, v)
	}
	osl, hasOSL := val(rec.Metrics.OSL)
	if hasOSL {
		p.osl = append(p.osl, osl)
	}
	if hasTTFT && ttft > 0 {
		p.ttft = append(p.ttft, ttft/1000)
	}
	e2el, hasE2EL := val(rec.Metrics.Latency)
	if hasE2EL {
		p.e2el = append(p.e2el, e2el/1000)
		if hasOSL && osl > 0 {
			p.e2elPerOSL = append(p.e2elPerOSL, e2el/1000/osl)
		}
	}
	if hasITL && itl > 0 {
		p.itl = append(p.itl, itl/1000)
	}
	if v, ok := val(rec.Metrics.FullResponseITL); ok && v > 0 {
		p.fullResponseITL = append(p.fullResponseITL, v/1000)
	}
	// Full-response ITL reconstructed from the timestamps: the time after
	// the first token, spread over the remaining tokens.
	if hasTTFT && hasOSL && osl > 1 && req.startNs > 0 && req.endNs > req.startNs {
		rest := float64(req.endNs-req.startNs)/1e9 - ttft/1000
		if rest > 0 {
			p.reconstructedITL = append(p.reconstructedITL, rest/(osl-1))
		}
	}
	return nil
}

// finish settles the profile's time span.
func (p *Profile) finish() {
	if p.StartNs == math.MaxInt64 {
		p.StartNs, p.EndNs = 0, 0
	}
}

// request is the timeline entry of a record.
func (p *Profile) request(r *req) Request {
	rel := func(ns int64) float64 {
		if ns <= 0 {
			return 0
		}
		return round(float64(ns-p.StartNs) / 1e6)
	}
	return Request{CID: p.names[r.cid], TI: r.ti, WID: p.names[r.wid], Phase: p.names[r.phase],
		Start: rel(r.startNs), Ack: rel(r.ackNs), End: rel(r.endNs), TTFTMs: r.ttftMs, TPOTMs: r.tpotMs,
		ISL: r.isl, OSL: r.osl, Cancelled: r.cancelled, Err: p.names[r.err]}
}

// errorCategory is "" when the record has no error (null, false, empty),
// else the first non-empty of type, error_type, code, class, status, the
// message up to its first colon, or "unknown".
func errorCategory(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case 'n', 'f':
		return ""
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil || s == "" {
			return ""
		}
		return messageCategory(s)
	case '{':
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil || len(m) == 0 {
			return ""
		}
		for _, k := range []string{"type", "error_type", "code", "class", "status"} {
			if s := scalarString(m[k]); s != "" {
				return clean(s)
			}
		}
		if s, ok := m["message"].(string); ok && s != "" {
			return messageCategory(s)
		}
		return "unknown"
	case '0':
		return ""
	case '[':
		if string(raw) == "[]" {
			return ""
		}
		return "unknown"
	}
	return "unknown"
}

func messageCategory(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	head, _, _ := strings.Cut(first, ":")
	head = strings.TrimSpace(head)
	if len(head) > 120 {
		head = head[:120]
	}
	if head == "" {
		return "unknown"
	}
	return clean(head)
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		if x {
			return "true"
		}
	}
	return ""
}

// clean drops NUL characters (jsonb refuses them) and invalid UTF-8. The
// readers fail a profile line or benchmark row holding either (strictjson),
// so for read input this only repairs a multi-byte character cut by
// messageCategory's truncation; DatasetSlug also serves rows built in code.
func clean(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
