package strictjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"clean", `{"conc": 16, "model": "dsr1", "a": [1, "x", {"b": null}]}`, ""},
		{"duplicate top-level key", `{"conc": 16, "isl": 1, "conc": 32}`, `duplicate key "conc"`},
		{"duplicate escaped spelling", `{"conc": 16, "\u0063onc": 32}`, `duplicate key "conc"`},
		{"duplicate nested key", `{"m": {"x": 1, "y": {"z": 1}, "x": 2}}`, `duplicate key "m.x"`},
		{"duplicate in array element", `{"a": [{"k": 1}, {"k": 1, "k": 2}]}`, `duplicate key "a[1].k"`},
		{"same key in sibling objects is fine", `[{"k": 1}, {"k": 2}, {"k": {"k": 3}}]`, ""},
		{"same key after closed nested object", `{"a": {"b": 1}, "b": 2}`, ""},
		{"duplicate among many keys", manyKeys(40, "k7"), `duplicate key "k7"`},
		{"many distinct keys", manyKeys(40, ""), ""},
		{"duplicate among hundreds of keys", manyKeys(600, "k7"), `duplicate key "k7"`},
		{"duplicate of the last of hundreds", manyKeys(600, "k599"), `duplicate key "k599"`},
		{"hundreds of distinct keys", manyKeys(600, ""), ""},
		{"escaped NUL", `{"model": "ds\u0000r1"}`, `field "model": string holds a NUL`},
		{"raw NUL", "{\"model\": \"ds\x00r1\"}", `field "model": string holds a NUL`},
		{"NUL in nested array", `{"arguments": [["a", "b\u0000"]]}`, `field "arguments[0][1]": string holds a NUL`},
		{"NUL in key", `{"mo\u0000del": 1}`, `field "mo\\u0000del": string holds a NUL`},
		{"escaped backslash before u0000 is text", `{"model": "a\\u0000"}`, ""},
		{"invalid UTF-8 byte", "{\"model\": \"ds\xffr1\"}", `field "model": invalid UTF-8`},
		{"truncated UTF-8 sequence", "{\"model\": \"\xe2\x82\"}", `field "model": invalid UTF-8`},
		{"lone high surrogate", `{"model": "\ud800x"}`, `field "model": invalid UTF-8`},
		{"lone low surrogate", `{"model": "\udc00"}`, `field "model": invalid UTF-8`},
		{"surrogate pair", `{"model": "\ud83d\ude00", "k": "é€😀"}`, ""},
		{"top-level string", "\"a\x00\"", `field "": string holds a NUL`},
		{"syntax error is the decoder's", `{"conc": 16 "conc": 1}`, ""},
		{"truncated", `{"conc": 16, "conc"`, `duplicate key "conc"`},
		{"not JSON", `NaN`, ""},
		{"empty", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Checker
			got := ""
			if err := c.Check([]byte(tt.doc)); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("Check(%q) = %q, want %q", tt.doc, got, tt.want)
			}
		})
	}
}

func manyKeys(n int, dup string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + itoa(i) + `": ` + itoa(i))
	}
	if dup != "" {
		b.WriteString(`, "` + dup + `": 0`)
	}
	b.WriteByte('}')
	return b.String()
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestCheckerReuse: a Checker carries nothing from one document to the next.
func TestCheckerReuse(t *testing.T) {
	var c Checker
	if err := c.Check([]byte(`{"a": {"k": 1, "k": 2}}`)); err == nil {
		t.Fatal("duplicate not found")
	}
	if err := c.Check([]byte(`{"k": 1}`)); err != nil {
		t.Fatalf("second document: %v", err)
	}
}

// TestCheckDeepNesting: nesting is handled without recursion.
func TestCheckDeepNesting(t *testing.T) {
	doc := strings.Repeat("[", 100000) + `"\u0000"` + strings.Repeat("]", 100000)
	err := Check([]byte(doc))
	if err == nil || !strings.HasSuffix(err.Error(), "string holds a NUL") {
		t.Fatalf("got %v", err)
	}
}

// FuzzCheck compares Check on valid JSON with a reference built on
// encoding/json's token stream: a duplicate key is found exactly when the
// reference finds one; a NUL or invalid UTF-8 is only reported when the
// document holds one.
func FuzzCheck(f *testing.F) {
	for _, seed := range []string{
		`{"a": [1, "x\u0000", {"b": "\ud800"}], "a": 1}`, `{"a": {"b": 1, "c": {"b": 2}}, "b": 3}`,
		`[{"k": 1}, {"k": 1, "\u006b": 2}]`, manyKeys(30, "k29"), manyKeys(30, ""),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := Check(data)
		if !json.Valid(data) {
			return
		}
		var e *Error
		if err != nil {
			e = err.(*Error)
		}
		if e != nil && e.Kind == NUL && !bytes.Contains(data, []byte{0}) && !bytes.Contains(bytes.ToLower(data), []byte(`\u0000`)) {
			t.Fatalf("NUL reported in %q", data)
		}
		if e != nil && e.Kind == InvalidUTF8 && utf8.Valid(data) && !bytes.Contains(bytes.ToLower(data), []byte(`\ud`)) {
			t.Fatalf("invalid UTF-8 reported in %q", data)
		}
		if e != nil && e.Kind != DuplicateKey {
			return // the reference below cannot tell what comes after
		}
		if want := referenceDuplicate(t, data); want != (e != nil) {
			t.Fatalf("Check(%q) = %v, reference duplicate = %v", data, err, want)
		}
	})
}

// referenceDuplicate walks encoding/json's tokens and reports a duplicate
// object key (compared decoded).
func referenceDuplicate(t *testing.T, data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type obj struct {
		keys  map[string]bool
		isObj bool
		key   bool // the next string token is a key
	}
	var stack []*obj
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *obj
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.isObj && top.key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].isObj {
					stack[len(stack)-1].key = true
				}
				continue
			}
			k := tok.(string)
			if top.keys[k] {
				return true
			}
			top.keys[k] = true
			top.key = false
			continue
		}
		switch d := tok.(type) {
		case json.Delim:
			switch d {
			case '{':
				stack = append(stack, &obj{keys: map[string]bool{}, isObj: true, key: true})
				continue
			case '[':
				stack = append(stack, &obj{})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		}
		if len(stack) > 0 && stack[len(stack)-1].isObj {
			stack[len(stack)-1].key = true
		}
	}
}

// sampleLine is shaped like an lm-eval samples line: a few keys, long
// prompt and response strings with some non-ASCII text.
func sampleLine() []byte {
	prompt := strings.Repeat("Question: what is 17 × 23? Let us think step by step — ", 60)
	doc := map[string]any{
		"doc_id": 17, "doc": map[string]any{"question": prompt, "answer": "391"},
		"target": "391", "arguments": map[string]any{"gen_args_0": map[string]any{"arg_0": prompt, "arg_1": map[string]any{"until": []string{"</s>"}}}},
		"resps": [][]string{{prompt}}, "filtered_resps": []string{"391"}, "filter": "strict-match",
		"metrics": []string{"exact_match"}, "doc_hash": "ab12", "prompt_hash": "cd34", "target_hash": "ef56", "exact_match": 1.0,
	}
	b, _ := json.Marshal(doc)
	return b
}

func BenchmarkCheck(b *testing.B) {
	line := sampleLine()
	var c Checker
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if err := c.Check(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValid is the floor to compare with: encoding/json's syntax check
// of the same bytes.
func BenchmarkValid(b *testing.B) {
	line := sampleLine()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if !json.Valid(line) {
			b.Fatal("invalid")
		}
	}
}

// BenchmarkCheckRow: a benchmark row of about 60 keys, mostly numbers.
func BenchmarkCheckRow(b *testing.B) {
	row := map[string]any{"hw": "b200", "model": "Qwen/Qwen3.5-397B-A17B-FP8", "framework": "sglang", "conc": 64}
	for _, st := range []string{"mean", "median", "p75", "p90", "p95", "p99", "p99.9", "std"} {
		for _, m := range []string{"ttft", "tpot", "itl", "e2el", "intvty", "e2el_per_osl", "tokens"} {
			row[st+"_"+m] = 0.0123456789
		}
	}
	line, _ := json.Marshal(row)
	var c Checker
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if err := c.Check(line); err != nil {
			b.Fatal(err)
		}
	}
}
