package wording

import "testing"

func TestPlural(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{{0, "0 rows"}, {1, "1 row"}, {2, "2 rows"}, {1 << 40, "1099511627776 rows"}} {
		if got := Plural(tt.n, "row", "rows"); got != tt.want {
			t.Errorf("Plural(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	for _, tt := range []struct {
		in    string
		limit int
		want  string
	}{
		{"a\n\tb  c\r\n", 0, "a b c"},
		{"  héllo wörld ", 5, "héllo…"},
		{"short", 5, "short"},
	} {
		if got := OneLine(tt.in, tt.limit); got != tt.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
		}
	}
}
