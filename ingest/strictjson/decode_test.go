package strictjson

import (
	"errors"
	"testing"
)

type decodeDoc struct {
	Runs []struct {
		ID     int64  `json:"id"`
		Reason string `json:"reason"`
	} `json:"runs"`
	Note string `json:"note"`
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"one object", `{"runs": [{"id": 1, "reason": "r"}], "note": "n"}`, ""},
		{"whitespace around", " \n{\"note\": \"n\"}\n\t ", ""},
		{"trailing data", "{\"note\": \"n\"} trailing", `line 1, column 15: data after the JSON value (exactly one value is expected)`},
		{"two objects", "{\"note\": \"a\"}\n{\"note\": \"b\"}", `line 2, column 1: data after the JSON value (exactly one value is expected)`},
		{"duplicate top-level key", "{\"runs\": [],\n \"runs\": []}", `line 2, column 2: duplicate key "runs"`},
		{"duplicate nested key", `{"runs": [{"id": 1, "id": 2, "reason": "r"}]}`, `line 1, column 21: duplicate key "runs[0].id"`},
		{"unknown top-level field", `{"runz": []}`, `unknown field "runz"`},
		{"unknown nested field", `{"runs": [{"id": 1, "reasn": "r"}]}`, `unknown field "reasn"`},
		{"wrong type", "{\n\"runs\": [{\"id\": \"1\"}]}", `line 2, column 20: cannot unmarshal string into Go struct field .runs.id of type int64`},
		{"syntax error", `{"note": "n",}`, `line 1, column 14: invalid character '}' looking for beginning of object key string`},
		{"truncated", `{"note": "n"`, `unexpected EOF`},
		{"empty", " \n", `empty document: one JSON value is expected`},
		{"NUL", `{"note": "a\u0000"}`, `line 1, column 10: field "note": string holds a NUL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v decodeDoc
			got := ""
			if err := Decode([]byte(tt.doc), &v); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("Decode(%q) = %q, want %q", tt.doc, got, tt.want)
			}
		})
	}
}

func TestDecodeKeepsCheckError(t *testing.T) {
	var v decodeDoc
	err := Decode([]byte(`{"note": "a", "note": "b"}`), &v)
	var e *Error
	if !errors.As(err, &e) || e.Kind != DuplicateKey || e.Field != "note" || e.Offset != 14 {
		t.Fatalf("Decode = %v, want a DuplicateKey *Error for note at offset 14", err)
	}
}
