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
	"github.com/inferencex/ingest/schema"
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

// req is how a record is kept until the timeline is written: the values
// the request timeline holds (docs/dashboard-schema.md, request_timeline),
// names as indexes into the profile's table of JSON-encoded names. Times are
// epoch nanoseconds as float64, as the dashboard reads them.
type req struct {
	credit, start, ack, end            float64
	ttftMs, tpotMs, isl, osl           float64
	ti, ad, srcOuter, srcInner         float64
	cid, wid, phase, srcTrace, srcKind uint32
	// replay is the record's replay lane (1 + its index in
	// Profile.replays), 0 without a correlation id.
	replay uint32
	has    uint16
}

// Bits of req.has: which optional values the record carries.
const (
	hasAck uint16 = 1 << iota
	hasTTFT
	hasTPOT
	hasISL
	hasOSL
	hasSrcTrace
	hasSrcOuter
	hasSrcInner
	hasSrcKind
	isCancelled
)

// reqBlock is how many records one block holds: the timeline grows block by
// block, never by copying what it holds.
const reqBlock = 4096

// Profile is what one pass over profile_export.jsonl yields.
type Profile struct {
	Accounting Accounting
	blocks     [][]req
	// originNs and endNs span the timeline: the earliest credit (else
	// start) and the latest end of its records (endNs never below 0).
	originNs, endNs float64
	// stats are the samples of the aggregate statistics.
	stats statSamples
	// reconstructedITL is the per-request full-response ITL of kept records
	// (profiling phase, no error), in seconds.
	reconstructedITL []float64
	// names holds every conversation, worker, phase and source name once,
	// JSON-encoded.
	names   []string
	nameIdx map[string]uint32
	// replays are the replay lanes (correlation ids) of the timeline's
	// records in order of first appearance, with their earliest dispatch.
	replays   []replayLane
	replayIdx map[string]uint32
}

// name interns a string as its JSON encoding.
func (p *Profile) name(s string) uint32 {
	b, _ := json.Marshal(s)
	return p.encoded(string(b))
}

func (p *Profile) encoded(s string) uint32 {
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

// nanos is an epoch-nanosecond timestamp written as an integer or float:
// ns as an integer, f as the float64 the dashboard reads; set is false for
// an absent or null one.
type nanos struct {
	ns  int64
	f   float64
	set bool
}

func (t *nanos) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		return nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		f, _ := strconv.ParseFloat(s, 64)
		*t = nanos{ns: v, f: f, set: true}
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !schema.Finite(f) {
		return fmt.Errorf("timestamp %s is not a number", s)
	}
	*t = nanos{ns: int64(f), f: f, set: true}
	return nil
}

// bare is a metadata value the dashboard reads only when it is a JSON
// number; any other value leaves it unset.
type bare struct {
	v   float64
	set bool
}

func (n *bare) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '-' && (b[0] < '0' || b[0] > '9') {
		*n = bare{}
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return err
	}
	*n = bare{v: f, set: true}
	return nil
}

type record struct {
	Metadata struct {
		Phase           *string `json:"benchmark_phase"`
		Credit          nanos   `json:"credit_issued_ns"`
		Start           nanos   `json:"request_start_ns"`
		Ack             nanos   `json:"request_ack_ns"`
		End             nanos   `json:"request_end_ns"`
		ConversationID  *string `json:"conversation_id"`
		TurnIndex       bare    `json:"turn_index"`
		WorkerID        *string `json:"worker_id"`
		AgentDepth      bare    `json:"agent_depth"`
		SourceTraceID   *string `json:"source_trace_id"`
		SourceOuter     bare    `json:"source_outer_idx"`
		SourceInner     bare    `json:"source_inner_idx"`
		SourceKind      *string `json:"source_kind"`
		WasCancelled    bool    `json:"was_cancelled"`
		RootCorrelation jsValue `json:"root_correlation_id"`
		XCorrelation    jsValue `json:"x_correlation_id"`
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
	TPOT            *number `json:"time_per_output_token"`
	FullResponseITL *number `json:"full_response_inter_token_latency"`
}

// empty reports a record that holds none of the fields the aggregator
// consumes ({}, {"metadata": {}}, nulls): it is no request, and counting
// it would inflate the profiled requests.
func (r *record) empty() bool {
	md, m := &r.Metadata, &r.Metrics
	return md.Phase == nil && !md.Start.set && !md.Ack.set && !md.End.set && (md.ConversationID == nil || *md.ConversationID == "") &&
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
		{"request_latency", m.Latency}, {"inter_token_latency", m.ITL}, {"time_per_output_token", m.TPOT},
		{"full_response_inter_token_latency", m.FullResponseITL}} {
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
	return v, schema.Finite(v)
}

// ReadProfile reads profile_export.jsonl in one pass. Blank lines are
// ignored; a line that is not a JSON object is an error naming the line.
func ReadProfile(r io.Reader) (*Profile, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	p := &Profile{Accounting: Accounting{ErrorCategories: map[string]int64{}}, originNs: math.Inf(1),
		nameIdx: map[string]uint32{}, replayIdx: map[string]uint32{}}
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
	p.stats.add(&rec)
	p.timeline(&rec)
	if !kept {
		return nil
	}
	// Full-response ITL reconstructed from the timestamps: the time after
	// the first token, spread over the remaining tokens.
	ttft, hasTTFT := val(rec.Metrics.TTFT)
	osl, hasOSL := val(rec.Metrics.OSL)
	if hasTTFT && hasOSL && osl > 1 && md.Start.ns > 0 && md.End.ns > md.Start.ns {
		rest := float64(md.End.ns-md.Start.ns)/1e9 - ttft/1000
		if rest > 0 {
			p.reconstructedITL = append(p.reconstructedITL, rest/(osl-1))
		}
	}
	return nil
}

// finish settles the timeline's origin.
func (p *Profile) finish() {
	if math.IsInf(p.originNs, 1) {
		p.originNs = 0
	}
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
