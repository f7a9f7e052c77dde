package report

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxInlineRunes caps a single value taken from input (an artifact name, a
// failure reason, a note, an abort reason) so one runaway value cannot
// swamp the report. It holds the longest sentence the ingest itself
// writes (a note, an abort reason) whole.
const maxInlineRunes = 600

// cutBackRunes is how far a cut value backs off to end at a word.
const cutBackRunes = 40

// oneLine makes s safe to place on a single line: invalid UTF-8 is replaced,
// ASCII whitespace, control and bidi-control characters collapse to one
// space, characters a reader cannot see (zero-width and other format
// characters, non-ASCII spaces, fillers) are shown as <U+XXXX>, the result
// is trimmed and cut to limit runes (ending in "…" when cut), at the end of
// a word when one ends in the last cutBackRunes runes.
func oneLine(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || unicode.IsSpace(r) && !invisible(r)
	})
	s = strings.Join(fields, " ")
	if strings.IndexFunc(s, invisible) >= 0 {
		var b strings.Builder
		for _, r := range s {
			if invisible(r) {
				fmt.Fprintf(&b, "<U+%04X>", r)
				continue
			}
			b.WriteRune(r)
		}
		s = b.String()
	}
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	rs := []rune(s)[:limit]
	for i := len(rs) - 1; i > 0 && i >= limit-cutBackRunes; i-- {
		if rs[i] == ' ' {
			rs = rs[:i]
			break
		}
	}
	return strings.TrimRight(string(rs), " ,;:") + "…"
}

// invisible reports whether r prints as nothing, or as a space a reader
// cannot tell from an ASCII one: format characters (zero-width space,
// joiners, word joiner, byte-order mark, soft hyphen; bidi controls excepted,
// they collapse to a space), non-ASCII spaces and the Hangul fillers. A value
// holding one renders like another value without it ("b200\u200b" like the
// catalogued "b200"), so the reports show it as <U+200B>.
func invisible(r rune) bool {
	switch {
	case r < 0x80:
		return false
	case unicode.Is(unicode.Bidi_Control, r):
		return false
	case unicode.Is(unicode.Cf, r):
		return true
	case unicode.IsSpace(r) && !unicode.IsControl(r):
		return true
	}
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800:
		return true
	}
	return false
}

// plainInline is a value from input made safe for one console line.
func plainInline(s string) string { return oneLine(s, maxInlineRunes) }

// wordJoiner (U+2060) is invisible and breaks no line: placed after "@",
// "#", "GH-", "://" or "www" of a value from input it keeps GitHub from
// reading a mention, an issue reference or an autolink there, while the
// text reads (and copies) the same.
const wordJoiner = "\u2060"

// mdInline is a value from input made safe for one line of GitHub Markdown:
// characters with Markdown meaning are backslash-escaped, characters with
// HTML meaning become entities, and a leading block marker (heading, list,
// ordered list) is neutralised, so the value renders as literal text and can
// neither break the table or list it sits in nor inject HTML. "$" is escaped
// too: GitHub renders $…$, $$…$$ and $`…`$ as LaTeX math (a "$" in a code
// span or a link target is inert and needs nothing). Nothing in it
// can notify anyone or link anything: a word joiner follows every "@" (a
// mention), "#" (an issue reference: "\#123" still links), "GH-" before a
// digit, "://" and "www." (autolinks, which also reference issues).
func mdInline(s string) string {
	s = oneLine(s, maxInlineRunes)
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i, r := range s {
		switch r {
		case '@':
			b.WriteString("@" + wordJoiner)
		case '#':
			b.WriteString("\\#" + wordJoiner)
		case ':':
			b.WriteRune(r)
			if strings.HasPrefix(s[i+1:], "//") {
				b.WriteString(wordJoiner)
			}
		case '\\', '`', '*', '_', '[', ']', '|', '~', '$':
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
			if r == '-' && i >= 2 && strings.EqualFold(s[i-2:i], "gh") && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
				b.WriteString(wordJoiner)
			}
		case '.', ')':
			if leadingDigits(s[:i]) {
				b.WriteByte('\\')
			}
			if r == '.' && i >= 3 && strings.EqualFold(s[i-3:i], "www") {
				b.WriteString(wordJoiner)
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
	if u.User != nil {
		// Credentials in a URL are never shown.
		u.User = nil
		raw = u.String()
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
