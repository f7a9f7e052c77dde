package eval

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/inferencex/ingest/ingest/catalog"
)

// MaxSampleLine bounds one line of a samples file. lm-eval lines hold a
// few-shot prompt (3–5 KB) and the model's outputs (up to tens of KB); a
// longer line is counted as malformed and skipped without being buffered.
const MaxSampleLine = 16 << 20

// Text kinds of the deduplicated sample texts.
const (
	TextDoc    = "doc"
	TextPrompt = "prompt"
	TextResps  = "resps"
)

// Text is one deduplicated text a sample references.
type Text struct {
	Kind    string
	Digest  [32]byte
	Content string
}

// Sample is one (document, filter) line of an lm-eval samples file.
type Sample struct {
	DocID  int
	Filter string
	// Doc, Prompt and Resps are the repeated texts; nil when the line has
	// none.
	Doc, Prompt, Resps *Text
	Target             *string
	Response           *string
	Score              *float64
	Passed             *bool
	// Metrics, FilteredResps and Data are JSON (nil when absent); Data holds
	// what else the line carries (generation arguments without the prompt,
	// lm-eval's hashes, task name, …).
	Metrics, FilteredResps, Data []byte
	// Line is the 1-based line number in the file.
	Line int
}

// BadLine is a line that was skipped, and why.
type BadLine struct {
	Line   int
	Reason string
}

// SampleStats counts what a samples file held.
type SampleStats struct {
	Lines int // non-blank lines
	Good  int
	Bad   int
	// FirstBad lists the first few bad lines (at most maxBadLines).
	FirstBad []BadLine
}

const maxBadLines = 5

// ReadSamples streams a samples file, calling fn for every good line in
// order. Bad lines (not JSON, not an object, truncated, a duplicate key, a
// NUL or invalid UTF-8 in a string (strictjson: never stripped or
// replaced), missing or bad doc_id, a (doc_id, filter) already read, longer
// than MaxSampleLine) are counted and skipped. It
// returns early only when fn or the reader fails.
func ReadSamples(r io.Reader, fn func(*Sample) error) (SampleStats, error) {
	return NewSampleReader().ReadSamples(r, fn)
}

// SampleReader reads samples files, reusing its buffers from one file to
// the next. A SampleReader is not safe for concurrent use; give each worker
// its own.
type SampleReader struct {
	br  *bufio.Reader
	buf []byte // a line longer than br's buffer
	p   lineParser
}

// keptLineBuffer bounds the long-line buffer a SampleReader keeps for the
// next file.
const keptLineBuffer = 1 << 20

// NewSampleReader returns a SampleReader with a 256 KiB read buffer.
func NewSampleReader() *SampleReader {
	return &SampleReader{br: bufio.NewReaderSize(nil, 256<<10)}
}

// ReadSamples is the package function ReadSamples with this reader's
// buffers.
func (sr *SampleReader) ReadSamples(r io.Reader, fn func(*Sample) error) (SampleStats, error) {
	var st SampleStats
	br := sr.br
	br.Reset(r)
	defer br.Reset(nil)
	buf := sr.buf[:0]
	defer func() {
		if cap(buf) <= keptLineBuffer {
			sr.buf = buf[:0]
		}
	}()
	line := 0
	// seen maps each (doc_id, filter) to its first line: lm-eval writes one
	// line per pair, so a repeat is a bad line, not a silent duplicate.
	seen := map[sampleKey]int{}
	p := &sr.p
	for {
		chunk, err := br.ReadSlice('\n')
		tooLong := false
		if errors.Is(err, bufio.ErrBufferFull) {
			buf = append(buf[:0], chunk...)
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = br.ReadSlice('\n')
				if !tooLong && len(buf)+len(chunk) > MaxSampleLine {
					tooLong, buf = true, buf[:0]
				}
				if !tooLong {
					buf = append(buf, chunk...)
				}
			}
			chunk = buf
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return st, fmt.Errorf("read line %d: %w", line+1, err)
		}
		if len(chunk) > 0 || !errors.Is(err, io.EOF) {
			line++
			if tooLong {
				st.Lines++
				st.bad(line, fmt.Sprintf("line is longer than %d bytes", MaxSampleLine))
			} else if trimmed := bytes.TrimSpace(chunk); len(trimmed) > 0 {
				st.Lines++
				s, reason := p.parse(trimmed)
				if reason == "" {
					k := sampleKey{s.DocID, s.Filter}
					if first, dup := seen[k]; dup {
						reason = fmt.Sprintf("duplicate of line %d (doc_id %d, filter %q)", first, s.DocID, s.Filter)
					} else {
						seen[k] = line
					}
				}
				if reason != "" {
					st.bad(line, reason)
				} else {
					s.Line = line
					st.Good++
					if ferr := fn(s); ferr != nil {
						return st, ferr
					}
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return st, nil
		}
	}
}

// sampleKey is the natural key of a sample line within its file.
type sampleKey struct {
	docID  int
	filter string
}

func (st *SampleStats) bad(line int, reason string) {
	st.Bad++
	if len(st.FirstBad) < maxBadLines {
		st.FirstBad = append(st.FirstBad, BadLine{Line: line, Reason: reason})
	}
}

// Summary describes a file's bad lines in one sentence.
func (st SampleStats) Summary() string {
	parts := make([]string, len(st.FirstBad))
	for i, b := range st.FirstBad {
		parts[i] = fmt.Sprintf("line %d: %s", b.Line, b.Reason)
	}
	s := fmt.Sprintf("%d of %d sample lines skipped (%s", st.Bad, st.Lines, strings.Join(parts, "; "))
	if st.Bad > len(st.FirstBad) {
		s += "; …"
	}
	return s + ")"
}

// isMetricKey reports a per-sample metric name (reference
// eval-samples-mapper: /^(?:exact_match|score|acc|f1|rouge|bleu|pass|em)\b/i).
func isMetricKey(k string) bool {
	for _, p := range []string{"exact_match", "score", "acc", "f1", "rouge", "bleu", "pass", "em"} {
		if len(k) >= len(p) && strings.EqualFold(k[:len(p)], p) && (len(k) == len(p) || !isWordByte(k[len(p)])) {
			return true
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// sampleKeys are the fields a sample row stores in their own columns.
var sampleKeys = map[string]bool{"doc_id": true, "doc": true, "target": true, "resps": true, "filtered_resps": true, "filter": true, "arguments": true}

// sampleOf maps the members of a line to a sample, or says why it is bad.
// validated says that Members validated the line.
func (p *lineParser) sampleOf(obj map[string]json.RawMessage, validated bool) (*Sample, string) {
	rawID, ok := obj["doc_id"]
	if !ok || string(rawID) == "null" {
		return nil, "missing doc_id"
	}
	id, ok := catalog.IdentityInt(anyOf(rawID, validated)) // a value that does not decode is not an integer either
	if !ok || id < 0 || id > math.MaxInt32 {
		return nil, "doc_id: " + string(rawID) + " is not a non-negative integer"
	}
	s := &Sample{DocID: int(id)}
	if f, ok := obj["filter"]; ok {
		if v, ok := textOf(f, validated); ok {
			s.Filter = v
		}
	}
	if d, ok := obj["doc"]; ok && !isNull(d) {
		s.Doc = p.newText(TextDoc, trimJSON(d))
	}
	if r, ok := obj["resps"]; ok && !isNull(r) {
		s.Resps = p.newText(TextResps, trimJSON(r))
	}
	data := map[string]json.RawMessage{}
	if a, ok := obj["arguments"]; ok && !isNull(a) {
		prompt, rest, done := (*Text)(nil), json.RawMessage(nil), false
		if validated {
			prompt, rest, done = p.splitPromptFast(a)
		}
		if !done {
			var text *string
			if text, rest = splitPrompt(a); text != nil {
				prompt = p.newText(TextPrompt, []byte(*text))
			}
		}
		s.Prompt = prompt
		if rest != nil {
			data["arguments"] = rest
		}
	}
	s.Target = targetText(obj["target"], validated)
	if fr, ok := obj["filtered_resps"]; ok && !isNull(fr) {
		s.FilteredResps = append([]byte(nil), trimJSON(fr)...) // the line buffer is reused
	}
	s.Response = responseText(obj["filtered_resps"], obj["resps"], validated)
	metrics := map[string]float64{}
	for k, v := range obj {
		if sampleKeys[k] {
			continue
		}
		if isMetricKey(k) {
			if f, ok := numberOf(v, validated); ok {
				metrics[k] = f
				continue
			}
		}
		data[k] = v
	}
	if len(metrics) > 0 {
		if enc, ok := appendFloatObject(nil, metrics); ok { // sorted keys
			s.Metrics = enc
		}
		s.Score = sampleScore(metrics)
		if s.Score != nil {
			p := *s.Score >= 0.5
			s.Passed = &p
		}
	}
	if len(data) > 0 {
		s.Data = appendRawObject(nil, data)
	}
	return s, ""
}

// sampleScore is the first of exact_match,strict-match, exact_match, score,
// acc; else the first metric of a strict-match filter; else the first
// metric (key order).
func sampleScore(m map[string]float64) *float64 {
	for _, k := range []string{"exact_match,strict-match", "exact_match", "score", "acc"} {
		if v, ok := m[k]; ok {
			return &v
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasSuffix(k, ",strict-match") {
			v := m[k]
			return &v
		}
	}
	if len(keys) > 0 {
		v := m[keys[0]]
		return &v
	}
	return nil
}

// splitPrompt takes the rendered prompt out of lm-eval's arguments: the
// 0.4 form {"gen_args_0": {"arg_0": prompt, "arg_1": kwargs}}, or the older
// [[prompt, kwargs]] / [prompt, …]. It returns what remains (nil when
// nothing does).
func splitPrompt(raw json.RawMessage) (*string, json.RawMessage) {
	var obj map[string]map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		if g, ok := obj["gen_args_0"]; ok {
			var p string
			if a0, ok := g["arg_0"]; ok && json.Unmarshal(a0, &p) == nil {
				delete(g, "arg_0")
				rest, err := json.Marshal(obj)
				if err != nil {
					return &p, nil
				}
				return &p, trimJSON(rest)
			}
		}
		return nil, trimJSON(raw)
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
		var p string
		if json.Unmarshal(list[0], &p) == nil {
			rest, _ := json.Marshal(list[1:])
			return &p, trimJSON(rest)
		}
		var inner []json.RawMessage
		if json.Unmarshal(list[0], &inner) == nil && len(inner) > 0 && json.Unmarshal(inner[0], &p) == nil {
			list[0], _ = json.Marshal(inner[1:])
			rest, _ := json.Marshal(list)
			return &p, trimJSON(rest)
		}
	}
	return nil, trimJSON(raw)
}

// targetText: a string as is, a number as written, an array's items joined
// by ", " (non-strings as JSON), anything else as JSON; null is nil.
func targetText(raw json.RawMessage, validated bool) *string {
	if raw == nil || isNull(raw) {
		return nil
	}
	if s, ok := textOf(raw, validated); ok {
		return &s
	}
	if list, ok := listOf(raw, validated); ok {
		parts := make([]string, len(list))
		for i, item := range list {
			if v, ok := textOf(item, validated); ok {
				parts[i] = v
			} else {
				parts[i] = string(item)
			}
		}
		s := strings.Join(parts, ", ")
		return &s
	}
	s := string(raw)
	return &s
}

// responseText is filtered_resps[0] (strings as they are, else JSON), else
// resps[0][0] or resps[0] when a string.
func responseText(filtered, resps json.RawMessage, validated bool) *string {
	if filtered != nil {
		if list, ok := listOf(filtered, validated); ok && len(list) > 0 {
			s, ok := textOf(list[0], validated)
			if !ok {
				s = string(list[0])
			}
			return &s
		}
	}
	if resps != nil {
		if list, ok := listOf(resps, validated); ok && len(list) > 0 {
			if s, ok := textOf(list[0], validated); ok {
				return &s
			}
			if s, ok := firstOfStrings(list[0], validated); ok {
				return &s
			}
		}
	}
	return nil
}

// newText digests content (hashed before it is copied into the text).
func newText(kind string, content []byte) *Text {
	h := sha256.New()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write(content)
	t := &Text{Kind: kind, Content: string(content)}
	h.Sum(t.Digest[:0])
	return t
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// trimJSON trims the whitespace around a JSON value.
func trimJSON(raw []byte) []byte { return bytes.TrimSpace(raw) }

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
