package eval

import (
	"path"
	"regexp"
	"strconv"
	"strings"
)

// The topology tokens of a result filename (its _tp8-pp1-…_ part). The
// artifact name repeats them, and they are the matrix's own values: HEAD's
// meta_env.json writer clobbers ep and dp_attention for single-node evals
// so when a name carries them they win.
var (
	singleNodeRF = regexp.MustCompile(`(?:^|_)tp(\d+)-pp(\d+)-dcp(\d+)-pcp(\d+)-ep(\d+)-dpa(true|false)_`)
	multiNodeRF  = regexp.MustCompile(`(?:^|_)prefill-tp(\d+)-pp(\d+)-dcp(\d+)-pcp(\d+)-ep(\d+)-dp(true|false)-nw(\d+)_decode-tp(\d+)-pp(\d+)-dcp(\d+)-pcp(\d+)-ep(\d+)-dp(true|false)-nw(\d+)_`)
	// seqToken is the "<isl>k<osl>k" token of an experiment name (8k1k).
	seqToken = regexp.MustCompile(`(?i)[_-](\d+)k(\d+)k[_\-.]`)
	// concSuffix is the batched-eval suffix of a file (_conc<N>).
	concSuffix = regexp.MustCompile(`_conc(\d+)(?:_\d+)?\.(?:json|jsonl)$`)
)

// nameTopology returns the topology fields a name states, as raw-row keys,
// or nil when it states none.
func nameTopology(name string) map[string]any {
	if m := multiNodeRF.FindStringSubmatch(name); m != nil {
		out := map[string]any{}
		for i, key := range []string{"tp", "pp", "dcp_size", "pcp_size", "ep"} {
			out["prefill_"+key] = atoi(m[1+i])
			out["decode_"+key] = atoi(m[8+i])
		}
		out["prefill_dp_attention"] = m[6] == "true"
		out["prefill_num_workers"] = atoi(m[7])
		out["decode_dp_attention"] = m[13] == "true"
		out["decode_num_workers"] = atoi(m[14])
		return out
	}
	if m := singleNodeRF.FindStringSubmatch(name); m != nil {
		out := map[string]any{}
		for i, key := range []string{"tp", "pp", "dcp_size", "pcp_size", "ep"} {
			out[key] = atoi(m[1+i])
		}
		out["dp_attention"] = m[6] == "true"
		return out
	}
	return nil
}

// nameSequence returns isl and osl from a "…_8k1k_…" token (×1024).
func nameSequence(name string) (isl, osl int, ok bool) {
	m := seqToken.FindStringSubmatch(name)
	if m == nil {
		return 0, 0, false
	}
	a, b := atoi(m[1]), atoi(m[2])
	if a <= 0 || b <= 0 || a > 1<<20 || b > 1<<20 {
		return 0, 0, false
	}
	return a * 1024, b * 1024, true
}

// fileConc returns the N of a batched file's _conc<N> suffix.
func fileConc(file string) (int, bool) {
	m := concSuffix.FindStringSubmatch(path.Base(file))
	if m == nil {
		return 0, false
	}
	n := atoi(m[1])
	return n, n > 0
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// resultsStem is what follows "results_" in a results file name, without
// the extension: the lm-eval timestamp and any _conc<N> suffix. Sample files
// of the same lm-eval run end in the same stem.
func resultsStem(file string) string {
	base := path.Base(file)
	return strings.TrimSuffix(strings.TrimPrefix(base, "results_"), path.Ext(base))
}

// isResultsFile reports an lm-eval (or SWE-bench) results file name.
func isResultsFile(file string) bool {
	base := path.Base(file)
	return strings.HasPrefix(base, "results") && strings.EqualFold(path.Ext(base), ".json")
}

// isSamplesFile reports an lm-eval samples file name.
func isSamplesFile(file string) bool {
	base := path.Base(file)
	return strings.HasPrefix(base, "samples_") && strings.EqualFold(path.Ext(base), ".jsonl")
}
