package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Formats of a compare's output, as the report's.
const (
	FormatText     = "text"
	FormatMarkdown = "md"
	FormatJSON     = "json"
)

// Write renders r in format.
func Write(w io.Writer, r *Result, format string) error {
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			*Result
			Unexplained int            `json:"unexplained"`
			ByRule      map[string]int `json:"byRule"`
		}{r, r.Unexplained(), r.ByRule()})
	case FormatMarkdown:
		return writeText(w, r, true)
	default:
		return writeText(w, r, false)
	}
}

func writeText(w io.Writer, r *Result, md bool) error {
	var b strings.Builder
	db := r.Schema
	if r.Level != "" {
		db += " (" + r.Level + ")"
	}
	head := fmt.Sprintf("Compare of run %d attempt %d with a database of %s schema: %d differences, %d unexplained",
		r.RunID, r.Attempt, db, len(r.Differences), r.Unexplained())
	if md {
		fmt.Fprintf(&b, "## %s\n\n| table | rows (ours) | rows (database) |\n|---|---:|---:|\n", head)
	} else {
		fmt.Fprintf(&b, "%s\n\n", head)
	}
	for _, t := range tables {
		n := r.Rows[t]
		if md {
			fmt.Fprintf(&b, "| %s | %d | %d |\n", t, n[0], n[1])
		} else {
			fmt.Fprintf(&b, "  %-18s ours %5d  database %5d\n", t, n[0], n[1])
		}
	}
	counts := r.ByRule()
	rules := slices.Sorted(maps.Keys(counts))
	if len(rules) > 0 {
		if md {
			b.WriteString("\n| rule | differences |\n|---|---:|\n")
		} else {
			b.WriteString("\nBy rule:\n")
		}
		for _, k := range rules {
			if md {
				fmt.Fprintf(&b, "| %s | %d |\n", ruleLink(k), counts[k])
			} else {
				fmt.Fprintf(&b, "  %-34s %d\n", k, counts[k])
			}
		}
		b.WriteString("\nDifferences:\n")
		if md {
			b.WriteString("\n")
		}
	}
	for _, d := range r.Differences {
		line := fmt.Sprintf("[%s] %s %s: %s", d.Rule, d.Table, d.Kind, d.Key)
		if d.Kind == Different {
			line += fmt.Sprintf(" — %s: ours %s, database %s", d.Field, show(d.Ours), show(d.DB))
			if d.RelChange != nil {
				line += fmt.Sprintf(" (%+.4g%%)", *d.RelChange*100)
			}
		}
		if md {
			fmt.Fprintf(&b, "- %s\n", line)
		} else {
			fmt.Fprintf(&b, "  %s\n", line)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func ruleLink(name string) string {
	for _, r := range Rules() {
		if r.Name == name {
			return fmt.Sprintf("[%s](%s%s)", name, rulesDoc, r.Anchor)
		}
	}
	return name
}

func show(v any) string {
	if v == nil {
		return "absent"
	}
	return fmt.Sprint(v)
}
