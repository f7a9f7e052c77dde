// Package wording is how the tool words counts and reasons in English,
// for the report, the coverage guard, the audit and the ledger alike.
package wording

import (
	"fmt"
	"strings"
)

// Plural is "1 failure" or "N failures".
func Plural[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// OneLine puts s on one line: every run of white space becomes one space,
// and at most limit runes are kept (0: all), ending in "…" when cut.
func OneLine(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); limit > 0 && len(r) > limit {
		s = string(r[:limit]) + "…"
	}
	return s
}
