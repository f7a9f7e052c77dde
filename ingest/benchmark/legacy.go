package benchmark

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/schema"
)

// Repairs of legacy rows, applied by the pipeline to a decoded row before
// Normalize, because they need context a row does not carry (the run id,
// the file name). Both follow the reference ingest; both are idempotent.

// seqToken matches a sequence-length token such as 1k1k or 32k16k that
// stands on its own between separators.
var seqToken = regexp.MustCompile(`(?:^|[^A-Za-z0-9])(\d+)k(\d+)k(?:[^A-Za-z0-9]|$)`)

// ISLOSLFromName reads input and output sequence lengths from a name:
// "test_32k16k_result.json" gives 32768/16384, "sweep-1k1k-12345" gives
// 1024/1024; "x1k1ky" gives nothing.
func ISLOSLFromName(name string) (isl, osl int, ok bool) {
	m := seqToken.FindStringSubmatch(name)
	if m == nil {
		return 0, 0, false
	}
	a, errA := strconv.Atoi(m[1])
	b, errB := strconv.Atoi(m[2])
	if errA != nil || errB != nil || a <= 0 || b <= 0 || a > 1<<20 || b > 1<<20 {
		return 0, 0, false
	}
	return a * 1024, b * 1024, true
}

// FillISLOSLFromNames gives a single-turn row that lacks isl or osl the
// lengths its file or artifact name states (the first name that states
// them). Values present in the row always win. It reports whether it
// changed the row.
func FillISLOSLFromNames(row map[string]any, names ...string) bool {
	if isAgentic(row) || (present(row, "isl") && present(row, "osl")) {
		return false
	}
	for _, name := range names {
		isl, osl, ok := ISLOSLFromName(name)
		if !ok {
			continue
		}
		changed := false
		if !present(row, "isl") {
			row["isl"], changed = float64(isl), true
		}
		if !present(row, "osl") {
			row["osl"], changed = float64(osl), true
		}
		return changed
	}
	return false
}

// legacyTPURun is the one run whose TPU rows were published with a wrong
// GPU count; the reference ingest repairs them the same way.
const legacyTPURun = 30864013158

// RepairLegacyTPURow fixes the benchmark rows of run 30864013158 on tpuv7
// (RepairLegacyTPUDeployment, with the row's own isl/osl), and divides the
// per-GPU throughputs, which were divided by too few chips, by dp. A
// repaired row is not repaired twice.
func RepairLegacyTPURow(runID int64, row map[string]any) bool {
	isl, _ := integerValue(row["isl"])
	osl, _ := integerValue(row["osl"])
	dp, ok := RepairLegacyTPUDeployment(runID, row, isl, osl)
	if !ok {
		return false
	}
	for _, key := range []string{"tput_per_gpu", "input_tput_per_gpu", "output_tput_per_gpu"} {
		if v, ok := jsonNumber(row[key]); ok && schema.Finite(v) {
			row[key] = v / float64(dp)
		}
	}
	return true
}

// RepairLegacyTPUDeployment repairs the deployment fields of a row of run
// 30864013158 — a benchmark row, or the deployment of an eval row of the
// same sweep (whose isl/osl the eval reader settled) — when it is the
// verified legacy shape: hw tpuv7 in any case, Qwen3.5-397B FP8 on vllm
// without speculative decoding, 8k/1k, tp 1 or 8 with ep 1, single node
// and without any explicit chip count or dp. The deployment is 4 chips
// (num_gpus 4) with data parallelism 8 for tp 1 (1 for tp 8), aggregated
// (disagg false; the eval aggregator's one worker per role becomes 0).
// It returns dp, and whether it repaired the row.
func RepairLegacyTPUDeployment(runID int64, row map[string]any, isl, osl int64) (int, bool) {
	if runID != legacyTPURun || !strings.EqualFold(catalog.ValueText(row["hw"]), "tpuv7") ||
		catalog.ValueText(row["model"]) != "Qwen/Qwen3.5-397B-A17B-FP8" ||
		catalog.ValueText(row["framework"]) != "vllm" || catalog.ValueText(row["precision"]) != "fp8" ||
		catalog.ValueText(row["spec_decoding"]) != "none" || isl != 8192 || osl != 1024 {
		return 0, false
	}
	tp, _ := integerValue(row["tp"])
	if tp != 1 && tp != 8 {
		return 0, false
	}
	if ep, ok := integerValue(row["ep"]); !ok || ep != 1 {
		return 0, false
	}
	for _, key := range []string{"num_gpus", "num_prefill_gpu", "num_decode_gpu", "dp"} {
		if _, ok := row[key]; ok {
			return 0, false
		}
	}
	for _, key := range []string{"disagg", "is_multinode"} {
		if v, set := catalog.ParseOptionalBool(row[key]); set && v {
			return 0, false
		}
	}
	dp := 1
	if tp == 1 {
		dp = 8
	}
	row["num_gpus"], row["dp"], row["disagg"] = float64(4), float64(dp), false
	if _, ok := row["prefill_tp"]; ok {
		row["prefill_num_workers"], row["decode_num_workers"] = float64(0), float64(0)
	}
	return dp, true
}
