package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRender(t *testing.T) {
	t.Parallel()
	s := failuresSummary()
	var js bytes.Buffer
	require.NoError(t, JSON(&js, s))
	want := map[string]string{
		"md":   Markdown(s),
		"json": js.String(),
		"text": Text(s),
	}
	require.Len(t, Formats(), len(want))
	for _, format := range Formats() {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			require.NoError(t, Render(&buf, s, format))
			require.Equal(t, want[format], buf.String())
		})
	}
}

func TestRenderRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		format  string
		nilSumm bool
		want    string
	}{
		{name: "unknown format", format: "html", want: `report format "html" (want one of md, json, text): unknown report format`},
		{name: "empty format", format: "", want: `report format ""`},
		{name: "case matters", format: "JSON", want: `report format "JSON"`},
		{name: "nil summary", format: "md", nilSumm: true, want: "report md: nil summary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := exampleSummary()
			if tt.nilSumm {
				s = nil
			}
			var buf bytes.Buffer
			err := Render(&buf, s, tt.format)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
			require.Zero(t, buf.Len())
			if !tt.nilSumm {
				require.ErrorIs(t, err, ErrUnknownFormat)
			}
		})
	}
}

func TestFormatsIsACopy(t *testing.T) {
	t.Parallel()
	f := Formats()
	f[0] = "changed"
	require.Equal(t, "md", Formats()[0])
}
