package strictjson

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAppendQuotedIsMarshal: strings come out as encoding/json writes
// them, those it escapes and those it copies.
func TestAppendQuotedIsMarshal(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain_name-1.json", `quote " back \ tab` + "\t nl \n", "a<b>&c", "métrics ✓",
		"line\u2028sep\u2029", "bad\xffutf8", "ctl\x00\x1f"} {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		require.Equal(t, string(want), string(AppendQuoted(nil, s)), "%q", s)
	}
}

// TestAppendCompactIsMarshal: raw values come out as encoding/json writes
// a json.RawMessage: compacted, HTML characters and line separators in
// strings escaped, escaped quotes and white space inside strings kept.
func TestAppendCompactIsMarshal(t *testing.T) {
	t.Parallel()
	for _, v := range []string{`1`, `"x"`, `[1, 2, {"k": null}]`, `["</s>", "Q:", "<|im_end|>"]`,
		` { "a\u2028" : "tab\t&amp;" } `, "\"\u2028\u2029\"", `"say \"<hi>\" \\" `,
		"[ \"a  b\" ,\n\t{ \"k\" : [ 1 , 2.5e3 ] } ]", `["\\", "x&y", "\u2028"]`, `"€ … ✓"`} {
		want, err := json.Marshal(json.RawMessage(v))
		require.NoError(t, err)
		require.Equal(t, string(want), string(AppendCompact(nil, []byte(v))), "%s", v)
	}
	require.Equal(t, "null", string(AppendCompact(nil, nil)))
}
