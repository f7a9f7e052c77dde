package report

import (
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

// Formats lists the formats Render accepts.
func Formats() []string { return []string{FormatMarkdown, FormatJSON, FormatText} }

// Render writes s to w in format: "md" (Markdown), "json" or "text".
func Render(w io.Writer, s *schema.Summary, format string) error {
	if s == nil {
		return fmt.Errorf("report %s: nil summary", format)
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
