package eval

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseMatchesChecked checks that a line read through Members and
// splitPromptFast gives the sample (or the reason) that the strict check,
// the decoder and splitPrompt give.
func FuzzParseMatchesChecked(f *testing.F) {
	for _, seed := range []string{
		`{"doc_id": 0, "doc": {"question": "2+2?", "answer": "4"}, "target": "4", "arguments": {"gen_args_0": {"arg_0": "Q: 2+2?\nA:", "arg_1": {"until": ["</s>", "\n\n"], "do_sample": false}}}, "resps": [["4"]], "filtered_resps": ["4"], "filter": "strict-match", "metrics": ["exact_match"], "doc_hash": "ab", "exact_match": 1.0}`,
		`{"doc_id":1,"arguments":{"gen_args_0":{"arg_0":"caf\u00e9 \ud83d\ude00 <b>&amp;</b> \"q\"\\ \/","arg_1":{"max_gen_toks":256}},"gen_args_1":{"arg_0":"x"}},"resps":[["a"]],"filtered_resps":["a"],"filter":"none","acc":0}`,
		` { "doc_id" : 2 , "arguments" : { "gen_args_0" : { "arg_1" : { "until" : [ "x" ] } , "arg_0" : "p" } } , "exact_match,strict-match" : 0.5 , "score" : "x" } `,
		`{"doc_id":3,"arguments":[["prompt",{"until":["\n"]}]],"resps":[["r"]],"target":["a",1,null]}`,
		`{"doc_id":4,"arguments":["prompt",{"k":1}],"target":7}`,
		`{"doc_id":5,"arguments":{"gen_args_0":null,"other":{"a":1}}}`,
		`{"doc_id":6,"arguments":{"gen_args_0":{"arg_0":7}}}`,
		`{"doc_id":7,"arguments":{"gen_args_0":{"arg_0":null,"arg_1":{}}}}`,
		`{"doc_id":8,"arguments":{"gen_args_0":{"arg_0":"p"},"x":5}}`,
		`{"doc_id":9,"arguments":{}}`, `{"doc_id":10,"arguments":null}`, `{"doc_id":-1}`, `{"doc_id":"12"}`, `{"doc_id":1.5}`,
		`{"doc_id":1,"doc_id":2}`, `{"doc_id":1,"x":"\u0000"}`, "{\"doc_id\":1,\"x\":\"\xff\"}", `{"doc_id":1,"x":NaN}`, `[1]`, `{"doc_id":1}x`,
		`{"doc_id":1,"filter":5,"f1":"0.5","bleu":2e400,"em":-0.0,"rouge1":1e-5,"pass@1":1}`,
		`{"doc_id":1,"\u0061rguments":{"gen_args_0":{"\u0061rg_0":"p\u2028"}}}`,
		// target, responses, filter, metrics and doc_id in every shape the decoders meet
		`{"doc_id":1e2,"target":["a",null,{"x":1},[1],"\u00e9\"",true],"filtered_resps":[null],"filter":null,"acc":null}`,
		`{"doc_id":-0,"target":{"a":[1]},"filtered_resps":[],"resps":[["a",null]],"filter":"a\u00e9","em":true}`,
		`{"doc_id":0.0,"target":true,"filtered_resps":"x","resps":[[null,"a"]],"filter":1,"acc":"1"}`,
		`{"doc_id":1E400,"target":"a\"b","filtered_resps":null,"resps":[["a",1]],"exact_match":1e400}`,
		`{"doc_id":2,"target":-1.50,"filtered_resps":[1],"resps":[[]],"score":-0}`,
		`{"doc_id":3,"target":[],"filtered_resps":[{"a":"b"}],"resps":[{"a":1}],"pass@1":[1]}`,
		`{"doc_id":4,"target":null,"resps":[null],"f1":0.1e-3}`,
		`{"doc_id":5,"resps":["r\n"],"rouge":{"a":1}}`,
		`{"doc_id":6,"resps":"x","filtered_resps":{"a":1}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if len(line) == 0 {
			return
		}
		var fast, checked lineParser
		got, gotReason := fast.parse(line)
		want, wantReason := checked.parseChecked(line)
		require.Equal(t, wantReason, gotReason, "%q", line)
		require.Equal(t, want, got, "%q", line)
	})
}

// The lines of one document repeat its texts; the second line reuses the
// first one's digests, and every text is what newText makes of it.
func TestRepeatedTextsReuseDigests(t *testing.T) {
	var p lineParser
	var got []*Sample
	for _, line := range []string{
		`{"doc_id":0,"doc":{"q":"a"},"arguments":{"gen_args_0":{"arg_0":"P"}},"resps":[["r"]],"filter":"strict-match"}`,
		`{"doc_id":0,"doc":{"q":"a"},"arguments":{"gen_args_0":{"arg_0":"P"}},"resps":[["r"]],"filter":"flexible-extract"}`,
		`{"doc_id":1,"doc":{"q":"b"},"arguments":{"gen_args_0":{"arg_0":"P"}},"resps":[["s"]],"filter":"strict-match"}`,
	} {
		s, reason := p.parse([]byte(line))
		require.Empty(t, reason)
		got = append(got, s)
	}
	for i, s := range got {
		for _, pair := range [][2]*Text{
			{s.Doc, newText(TextDoc, []byte([]string{`{"q":"a"}`, `{"q":"a"}`, `{"q":"b"}`}[i]))},
			{s.Prompt, newText(TextPrompt, []byte("P"))},
			{s.Resps, newText(TextResps, []byte([]string{`[["r"]]`, `[["r"]]`, `[["s"]]`}[i]))},
		} {
			require.Equal(t, pair[1], pair[0], "line %d", i)
		}
	}
	require.NotSame(t, got[0].Doc, got[1].Doc)
}
