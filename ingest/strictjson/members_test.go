package strictjson

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

func TestHasSpecial(t *testing.T) {
	for b := 0; b < 256; b++ {
		for pos := 0; pos < 8; pos++ {
			word := []byte("abcdefgh")
			word[pos] = byte(b)
			var w uint64
			for i := 7; i >= 0; i-- {
				w = w<<8 | uint64(word[i])
			}
			if got := hasSpecial(w); got != special[b] {
				t.Fatalf("hasSpecial(%q) = %v, want %v", word, got, special[b])
			}
		}
	}
}

// FuzzMembers checks that Members accepts only objects that encoding/json
// finds valid and Check finds clean, that it accepts every small one of
// them, and that its members and Split's are those encoding/json sees.
func FuzzMembers(f *testing.F) {
	for _, seed := range []string{
		`{"a": 1, "b": [true, false, null, -0.5e+3], "c": {"d": "x\"y\\", "e": {}}, "f": []}`,
		` {"\u0061" : "é😀\ud83d\ude00\n\/"} `, `{"a":1,"a":2}`, `{"a":"\u0000"}`, "{\"a\":\"\xff\"}", `{"a":01}`,
		`{"a":1}x`, `[1]`, `"s"`, `{"a":"\ud800"}`, `{"a":"\x"}`, `{"a":tru}`, `{"a":1.}`, `{"a":-}`, `{"a":"` + "\t" + `"}`,
		`{"ab\\":"c\\\\","d":["\\\"",{"e":"]}"}]}`, `{"a":1,}`, `{}`, `{"x":{"a":1,"a":2}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Checker
		members, ok := c.Members(data, nil)
		var want map[string]json.RawMessage
		object := bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))
		clean := object && json.Valid(data) && Check(data) == nil && json.Unmarshal(data, &want) == nil
		if !ok {
			if clean && len(data) < 200 {
				t.Fatalf("Members refuses %q", data)
			}
			return
		}
		if !clean {
			t.Fatalf("Members accepts %q", data)
		}
		if len(members) != len(want) {
			t.Fatalf("%q: %d members, want %d", data, len(members), len(want))
		}
		split := Split(bytes.TrimLeft(data, " \t\r\n"), nil)
		for i, m := range members {
			if !bytes.Equal(want[string(m.Key)], m.Value) {
				t.Fatalf("%q: member %q = %q, want %q", data, m.Key, m.Value, want[string(m.Key)])
			}
			if i >= len(split) || !bytes.Equal(split[i].Key, m.Key) || !bytes.Equal(split[i].Value, m.Value) || split[i].KeyEscaped != m.KeyEscaped {
				t.Fatalf("%q: Split %+v, Members %+v", data, split, members)
			}
			if !m.KeyEscaped && !bytes.Contains(data, []byte(`"`+string(m.Key)+`"`)) {
				t.Fatalf("%q: key %q, not escaped, is not in the document as written", data, m.Key)
			}
			if m.Value[0] == '"' {
				var s string
				if err := json.Unmarshal(m.Value, &s); err != nil {
					t.Fatal(err)
				}
				if got, _ := AppendString(nil, m.Value); string(got) != s {
					t.Fatalf("AppendString(%q) = %q, want %q", m.Value, got, s)
				}
			}
		}
		if len(split) != len(members) {
			t.Fatalf("%q: Split %+v, Members %+v", data, split, members)
		}
	})
}

// Elements splits a validated array into its elements, whatever their
// kind and spacing.
func TestElements(t *testing.T) {
	for _, tc := range []struct {
		arr  string
		want []string
	}{
		{`[]`, nil},
		{` [ ] `, nil},
		{`[1]`, []string{`1`}},
		{`[ {"a": [1, {"b": "]"}]} , "x\"]" ,null,-2.5e3, [[]] ]`, []string{`{"a": [1, {"b": "]"}]}`, `"x\"]"`, `null`, `-2.5e3`, `[[]]`}},
	} {
		var c Checker
		if _, ok := c.Members([]byte(`{"k": `+tc.arr+`}`), nil); !ok {
			t.Fatalf("Members refuses %q", tc.arr)
		}
		var got []string
		for _, e := range Elements([]byte(tc.arr), nil) {
			got = append(got, string(e))
		}
		if !slices.Equal(got, tc.want) {
			t.Fatalf("Elements(%s) = %q, want %q", tc.arr, got, tc.want)
		}
	}
}
