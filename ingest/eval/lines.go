package eval

import (
	"encoding/json"

	"github.com/inferencex/ingest/ingest/strictjson"
)

// lineParser holds the buffers of parse from one line to the next.
type lineParser struct {
	chk     strictjson.Checker
	members []strictjson.Member
	// outer, inner and text serve splitPromptFast.
	outer, inner []strictjson.Member
	text         []byte
	// last holds the last text of each kind: lm-eval writes the lines of
	// one document (one per filter) one after the other, with the same
	// document, prompt and outputs.
	last map[string]*Text
}

// newText is the package newText, except that a text equal to the last
// one of its kind reuses its digest and content instead of hashing and
// copying it again.
func (p *lineParser) newText(kind string, content []byte) *Text {
	if t, ok := p.last[kind]; ok && t.Content == string(content) {
		same := *t
		return &same
	}
	t := newText(kind, content)
	if p.last == nil {
		p.last = make(map[string]*Text, 3)
	}
	p.last[kind] = t
	return t
}

// parse decodes one line, or says why it is bad. A line that is a valid,
// strict JSON object is split into its members in one pass; any other line
// goes through the strict check and the decoder, which say what is wrong.
//
// The one-pass split (and splitPromptFast) is kept while it is worth more
// than 5 % of the first ingest against parseChecked alone; the figure and
// the commands that measure it are in docs/performance.md, "Current
// figures".
func (p *lineParser) parse(line []byte) (*Sample, string) {
	if len(line) == 0 || line[0] != '{' {
		return p.parseChecked(line)
	}
	members, ok := p.chk.Members(line, p.members[:0])
	p.members = members[:0]
	if !ok {
		return p.parseChecked(line)
	}
	// The values alias the line, as the decoder's RawMessages would copy
	// it: everything kept beyond the line is copied below.
	obj := make(map[string]json.RawMessage, len(members))
	for _, m := range members {
		obj[string(m.Key)] = m.Value
	}
	clear(members)
	return p.sampleOf(obj, true)
}

// parseChecked decodes a line that Members refused, or says why it is bad.
func (p *lineParser) parseChecked(line []byte) (*Sample, string) {
	chk := &p.chk
	if err := chk.Check(line); err != nil {
		return nil, err.Error()
	}
	if line[0] != '{' {
		return nil, "not a JSON object"
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return nil, "not JSON: " + shortErr(err)
	}
	return p.sampleOf(obj, false)
}

// splitPromptFast is splitPrompt for the lm-eval 0.4 form
// {"gen_args_0": {"arg_0": prompt, …}, …} of a line that Members validated
// (so its parts are split without another check):
// the prompt is decoded once, straight from the line. done is false for
// any other form, which splitPrompt then handles.
func (p *lineParser) splitPromptFast(raw []byte) (prompt *Text, rest json.RawMessage, done bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil, false
	}
	outer := strictjson.Split(raw, p.outer[:0])
	p.outer = outer[:0]
	defer clear(outer)
	// What splitPrompt decodes the arguments into, less the prompt.
	obj := make(map[string]map[string]json.RawMessage, len(outer))
	found := false
	for _, m := range outer {
		if len(m.Value) == 0 || m.Value[0] != '{' {
			return nil, nil, false // null or not an object
		}
		inner := strictjson.Split(m.Value, p.inner[:0])
		p.inner = inner[:0]
		g := make(map[string]json.RawMessage, len(inner))
		for _, im := range inner {
			if string(m.Key) == "gen_args_0" && string(im.Key) == "arg_0" {
				text, ok := strictjson.AppendString(p.text[:0], im.Value)
				if !ok {
					return nil, nil, false // not a string
				}
				p.text, found = text, true
				continue
			}
			g[string(im.Key)] = im.Value
		}
		clear(inner)
		obj[string(m.Key)] = g
	}
	if !found {
		return nil, nil, false
	}
	prompt = p.newText(TextPrompt, p.text)
	if cap(p.text) > keptLineBuffer { // a huge prompt's buffer is not kept
		p.text = nil
	}
	return prompt, appendArgsObject(nil, obj), true
}
