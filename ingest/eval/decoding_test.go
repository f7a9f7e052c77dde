package eval

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDecoding: temperature and do_sample come from the task's
// generation_kwargs, and the run's gen_kwargs win over them (as lm-eval
// applies them); a file that says neither leaves both unknown.
func TestDecoding(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	b := func(v bool) *bool { return &v }
	for _, tc := range []struct {
		name, doc string
		want      Decoding
	}{
		{"task only", `"configs": {"gsm8k": {"generation_kwargs": {"do_sample": false, "temperature": 0.0}}}`,
			Decoding{Temperature: f(0), DoSample: b(false)}},
		{"run overrides", `"configs": {"gsm8k": {"generation_kwargs": {"do_sample": false, "temperature": 0.0}}},
			"config": {"gen_kwargs": {"temperature": 0.6, "do_sample": "true"}}`, Decoding{Temperature: f(0.6), DoSample: b(true)}},
		{"neither", `"config": {"gen_kwargs": {"max_tokens": 16}}`, Decoding{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := `{"lm_eval_version": "0.4.9", "results": {"gsm8k": {"exact_match,strict-match": 0.95}}, ` + tc.doc + `}`
			_, tasks, err := readResults(strings.NewReader(doc))
			require.NoError(t, err)
			require.Len(t, tasks, 1)
			require.Equal(t, tc.want, tasks[0].decoding)
		})
	}
}
