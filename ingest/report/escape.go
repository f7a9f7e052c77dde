package report

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxInlineRunes caps a single value taken from input (an artifact name, a
// failure reason) so one runaway value cannot swamp the report.
const maxInlineRunes = 300

// oneLine makes s safe to place on a single line: invalid UTF-8 is replaced,
// whitespace, control and bidi-control characters collapse to one space, the
// result is trimmed and cut to limit runes (ending in "…" when cut).
func oneLine(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
	})
	s = strings.Join(fields, " ")
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return string([]rune(s)[:limit]) + "…"
}

// plainInline is a value from input made safe for one console line.
func plainInline(s string) string { return oneLine(s, maxInlineRunes) }

// mdInline is a value from input made safe for one line of GitHub Markdown:
// characters with Markdown meaning are backslash-escaped, characters with
// HTML meaning become entities, and a leading block marker (heading, list,
// ordered list) is neutralised, so the value renders as literal text and can
// neither break the table or list it sits in nor inject HTML.
func mdInline(s string) string {
	s = oneLine(s, maxInlineRunes)
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '|', '~', '#':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '-', '+', '=':
			if i == 0 {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		case '.', ')':
			if leadingDigits(s[:i]) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// leadingDigits reports whether prefix is a non-empty run of ASCII digits,
// i.e. whether the next "." or ")" would start an ordered list item.
func leadingDigits(prefix string) bool {
	if prefix == "" || len(prefix) > 9 {
		return false
	}
	for _, c := range []byte(prefix) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// mdURL returns raw as a URL that is safe inside a Markdown link target:
// only absolute http(s) URLs are accepted, and characters that could end the
// target or open HTML are percent-encoded.
func mdURL(raw string) (string, bool) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || !utf8.ValidString(raw) {
		return "", false
	}
	var b strings.Builder
	for _, c := range []byte(raw) {
		switch c {
		case '(', ')', '<', '>', '"', '\\', '`', '|':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			if c <= ' ' || c == 0x7f {
				fmt.Fprintf(&b, "%%%02X", c)
				continue
			}
			b.WriteByte(c)
		}
	}
	return b.String(), true
}
