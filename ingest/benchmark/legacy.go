package benchmark

import (
	"regexp"
	"strconv"

	"github.com/inferencex/ingest/ingest/catalog"
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

// RepairLegacyTPURow fixes the rows of run 30864013158 on tpuv7: the
// deployment is 4 chips (num_gpus 4) with data parallelism 8 for tp 1, and
// the per-GPU throughputs were divided by too few chips. Other rows are
// left alone; a repaired row is not repaired twice.
func RepairLegacyTPURow(runID int64, row map[string]any) bool {
	if runID != legacyTPURun || catalog.ValueText(row["hw"]) != "tpuv7" || catalog.ValueText(row["model"]) != "Qwen/Qwen3.5-397B-A17B-FP8" ||
		catalog.ValueText(row["framework"]) != "vllm" || catalog.ValueText(row["precision"]) != "fp8" {
		return false
	}
	if spec := catalog.ValueText(row["spec_decoding"]); spec != "" && spec != "none" {
		return false
	}
	if isl, _ := integerValue(row["isl"]); isl != 8192 {
		return false
	}
	if osl, _ := integerValue(row["osl"]); osl != 1024 {
		return false
	}
	tp, _ := integerValue(row["tp"])
	if tp != 1 && tp != 8 {
		return false
	}
	if ep, ok := integerValue(row["ep"]); present(row, "ep") && (!ok || ep != 1) {
		return false
	}
	for _, key := range []string{"num_gpus", "num_prefill_gpu", "num_decode_gpu", "dp"} {
		if present(row, key) {
			return false
		}
	}
	for _, key := range []string{"disagg", "is_multinode"} {
		if v, set := catalog.ParseOptionalBool(row[key]); set && v {
			return false
		}
	}
	dp := 1
	if tp == 1 {
		dp = 8
	}
	row["num_gpus"], row["dp"], row["disagg"] = float64(4), float64(dp), false
	for _, key := range []string{"prefill_num_workers", "decode_num_workers"} {
		if present(row, key) {
			row[key] = float64(0)
		}
	}
	for _, key := range []string{"tput_per_gpu", "input_tput_per_gpu", "output_tput_per_gpu"} {
		if v, ok := numericValue(row[key]); ok && finite(v) {
			row[key] = v / float64(dp)
		}
	}
	return true
}
