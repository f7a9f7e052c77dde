package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// Report formats accepted by Render.
const (
	FormatMarkdown = "md"
	FormatJSON     = "json"
	FormatText     = "text"
)

// ErrUnknownFormat is wrapped by Render for a format it does not know.
var ErrUnknownFormat = errors.New("unknown report format")

// ErrUnreadableSummary is wrapped by Render for a summary whose
// schemaVersion this build does not know (schema.UnreadableReason): it
// writes why instead of a report, since the fields it would read may mean
// something else.
var ErrUnreadableSummary = schema.ErrUnreadableSummary

// Formats lists the formats Render accepts.
func Formats() []string { return []string{FormatMarkdown, FormatJSON, FormatText} }

// Render writes s to w in format: "md" (Markdown), "json" or "text".
func Render(w io.Writer, s *schema.Summary, format string) error {
	if s == nil {
		return fmt.Errorf("report %s: nil summary", format)
	}
	if err := s.CheckReadable(); err != nil {
		return renderUnreadable(w, s, format, err)
	}
	var out string
	switch format {
	case FormatMarkdown:
		out = Markdown(s)
	case FormatJSON:
		return JSON(w, s)
	case FormatText:
		out = Text(s)
	default:
		return fmt.Errorf("report format %q (want one of %s): %w", format, strings.Join(Formats(), ", "), ErrUnknownFormat)
	}
	if _, err := io.WriteString(w, out); err != nil {
		return fmt.Errorf("report %s: %w", format, err)
	}
	return nil
}

// renderUnreadable writes, in format, that the summary cannot be read and
// why — never a heading that says what became of the ingest — and
// returns unreadable, the summary's CheckReadable error.
func renderUnreadable(w io.Writer, s *schema.Summary, format string, unreadable error) error {
	why := schema.UnreadableReason(s.SchemaVersion)
	var err error
	switch format {
	case FormatMarkdown:
		_, err = fmt.Fprintf(w, "## Ingest report — ❓ Summary unreadable\n\n%s.\n", why)
	case FormatText:
		_, err = fmt.Fprintf(w, "Ingest report — ❓ Summary unreadable\n%s.\n", why)
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		err = enc.Encode(struct {
			SchemaVersion int    `json:"schemaVersion"`
			Readable      bool   `json:"readable"`
			Reason        string `json:"reason"`
		}{s.SchemaVersion, false, why})
	default:
		return fmt.Errorf("report format %q (want one of %s): %w", format, strings.Join(Formats(), ", "), ErrUnknownFormat)
	}
	if err != nil {
		return fmt.Errorf("report %s: %w", format, err)
	}
	return unreadable
}
