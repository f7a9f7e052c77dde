package report

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestOneLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"plain", "bmk_x", 10, "bmk_x"},
		{"whitespace collapses", "  a\n\tb\r\n  c  ", 10, "a b c"},
		{"controls and bidi", "a\x1b[0m\u202eb\x00", 10, "a [0m b"},
		{"invalid utf-8", "a\xffb", 10, "a\uFFFDb"},
		{"cut at max runes", "αβγδε", 3, "αβγ…"},
		{"exactly max", "abc", 3, "abc"},
		{"empty", " \n ", 3, ""},
		{"zero-width space shown", "b200\u200b", 20, "b200<U+200B>"},
		{"no-break space and BOM shown", "a\u00a0b\ufeff", 20, "a<U+00A0>b<U+FEFF>"},
		{"word joiner shown", "h\u2060100", 20, "h<U+2060>100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, oneLine(tt.in, tt.max))
		})
	}
}

func TestMDInline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"bmk_dsr1_1k1k", `bmk\_dsr1\_1k1k`},
		{"a|b", `a\|b`},
		{"<script>", "&lt;script&gt;"},
		{"`x`", "\\`x\\`"},
		{"*b* [l](u) ~s~ \\", `\*b\* \[l\](u) \~s\~ \\`},
		{"&amp;", "&amp;amp;"},
		{"# h", "\\#\u2060 h"},
		{"@org/team", "@\u2060org/team"},
		{"fixes #123, GH-7 and gh-8", "fixes \\#\u2060123, GH-\u20607 and gh-\u20608"},
		{"see https://github.com/o/r/issues/1 or www.x.io", "see https:\u2060//github.com/o/r/issues/1 or www\u2060.x.io"},
		{"b200\u200b", "b200&lt;U+200B&gt;"},
		{"- item", `\- item`},
		{"+ item", `\+ item`},
		{"= setext", `\= setext`},
		{"12. item", `12\. item`},
		{"3) item", `3\) item`},
		{"v1.2 a-b", "v1.2 a-b"},
		{"line\nbreak", "line break"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, mdInline(tt.in))
		})
	}
}

func TestMDURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   string
		wantOK bool
	}{
		{"https://github.com/o/r/actions/runs/1", "https://github.com/o/r/actions/runs/1", true},
		{" http://localhost:8080/x?a=1&b=2 ", "http://localhost:8080/x?a=1&b=2", true},
		{"https://h/a b(c)<d>", "https://h/a%20b%28c%29%3Cd%3E", true},
		{"javascript:alert(1)", "", false},
		{"/actions/runs/1", "", false},
		{"https://", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, ok := mdURL(tt.in)
			require.Equal(t, tt.wantOK, ok)
			require.Equal(t, tt.want, got)
		})
	}
}

// FuzzMDInline checks that no input escapes its line or its table cell, or
// reaches the page as HTML or as a code span.
func FuzzMDInline(f *testing.F) {
	for _, seed := range []string{"bmk_a|b<script>`x`", "</details>\n| a |", "\\|", "1. x", "\x1b[31m", "\xff\xfe"} {
		f.Add(seed)
	}
	unescapedPipe := regexp.MustCompile(`(^|[^\\])(\\\\)*\|`)
	f.Fuzz(func(t *testing.T, in string) {
		got := mdInline(in)
		require.True(t, utf8.ValidString(got))
		require.NotContains(t, got, "\n")
		require.NotContains(t, got, "\r")
		require.NotContains(t, got, "<")
		require.NotContains(t, got, ">")
		require.False(t, unescapedPipe.MatchString(got), "unescaped pipe in %q", got)
		require.False(t, strings.Contains(strings.ReplaceAll(got, "\\`", ""), "`"), "unescaped backtick in %q", got)
	})
}
