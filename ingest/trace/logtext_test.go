package trace_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/trace"
)

func TestLogText(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want string
	}{
		{"ascii", "INFO ready\n", "INFO ready\n"},
		{"nul bytes dropped", "a\x00b\x00\x00c", "abc"},
		{"valid multibyte kept", "caf\u00e9 \u2603 \U0001F600", "caf\u00e9 \u2603 \U0001F600"},
		{"lone continuation byte", "a\x80b", "a\uFFFDb"},
		{"truncated three-byte sequence is one replacement", "a\xE2\x82b", "a\uFFFDb"},
		{"surrogate lead is three replacements", "\xED\xA0\x80", "\uFFFD\uFFFD\uFFFD"},
		{"overlong two-byte lead", "\xC0\xAF", "\uFFFD\uFFFD"},
		{"incomplete sequence at the end", "ok\xF0\x9F\x98", "ok\uFFFD"},
		{"byte above F4", "\xF5x", "\uFFFDx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Whole, then one byte per write: a write may cut a character.
			for _, step := range []int{len(tc.in) + 1, 1} {
				var out bytes.Buffer
				lt := trace.NewLogText(&out)
				for i := 0; i < len(tc.in); i += step {
					_, err := lt.Write([]byte(tc.in[i:min(i+step, len(tc.in))]))
					require.NoError(t, err)
				}
				require.NoError(t, lt.Close())
				require.Equal(t, tc.want, out.String(), "write size %d", step)
			}
		})
	}
}
