package report

import (
	"fmt"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// outcome is which variant of the heading and footer a summary gets.
type outcome int

const (
	outcomeSucceeded outcome = iota
	outcomeWithFailures
	outcomeAborted
	outcomeDryRun
	outcomePurged
)

// outcomeOf picks the variant: a purged run first (nothing of it is
// written, dry run or not), then a dry run (nothing was written either
// way), then a rolled-back run, then a run written with failures.
func outcomeOf(s *schema.Summary) outcome {
	switch {
	case s.Status == schema.StatusPurged:
		return outcomePurged
	case s.DryRun:
		return outcomeDryRun
	case s.Status == schema.StatusAborted:
		return outcomeAborted
	case failureTotal(s) > 0 || s.Status == schema.StatusCompletedWithFailures:
		return outcomeWithFailures
	default:
		return outcomeSucceeded
	}
}

// failureTotal is the N of "with N failures": the failed cells plus the
// failures that belong to no row, or the listed failures when the counters
// are all zero.
func failureTotal(s *schema.Summary) int64 {
	if n := s.FailureCount(); n > 0 {
		return n
	}
	return totalFailures(s)
}

// abortReason is the one-line reason of an aborted run, escaped with esc and
// without a trailing period (the sentence adds its own).
func abortReason(s *schema.Summary, esc func(string) string) string {
	r := strings.TrimSpace(strings.TrimSuffix(oneLine(s.AbortReason, maxInlineRunes), "."))
	if r == "" {
		return ""
	}
	return esc(r)
}

// noBenchmarkReason is why a run that was written (or, in a dry run, would
// be) yielded no benchmark data, escaped with esc and without a trailing
// period; "" when it did yield some, or was rolled back.
func noBenchmarkReason(s *schema.Summary, esc func(string) string) string {
	if s.Status == schema.StatusAborted {
		return ""
	}
	return esc(strings.TrimSpace(strings.TrimSuffix(oneLine(s.Details.NoBenchmarkData, maxInlineRunes), ".")))
}

// headingEN is the English heading after "Ingest report — ": an emoji and a
// sentence. Values from input are escaped with esc.
func headingEN(s *schema.Summary, esc func(string) string) (emoji, sentence string) {
	db := "the database"
	if t := oneLine(s.Target, maxInlineRunes); t != "" {
		db = "the " + esc(t) + " database"
	}
	if why := noBenchmarkReason(s, esc); why != "" {
		if s.DryRun {
			return "⚠️", "No benchmark data in this run: " + why + ". Nothing was written (dry run)."
		}
		return "⚠️", "No benchmark data in this run: " + why + ". The rest was ingested into " + db + "."
	}
	reason := abortReason(s, esc)
	switch outcomeOf(s) {
	case outcomePurged:
		return "🚫", purgedHeading(s, esc, purgedEN())
	case outcomeDryRun:
		if s.Status == schema.StatusAborted {
			if reason == "" {
				return "🔎", "Dry run failed. Nothing was written."
			}
			return "🔎", "Dry run failed: " + reason + ". Nothing was written."
		}
		return "🔎", "Dry run — nothing was written."
	case outcomeAborted:
		if reason == "" {
			return "❌", "Ingest failed. Nothing was written."
		}
		return "❌", "Ingest failed: " + reason + ". Nothing was written."
	case outcomeWithFailures:
		switch n := failureTotal(s); n {
		case 0:
			return "⚠️", "Results ingested into " + db + ", with failures."
		case 1:
			return "⚠️", "Results ingested into " + db + ", with 1 failure."
		default:
			return "⚠️", fmt.Sprintf("Results ingested into %s, with %d failures.", db, n)
		}
	default:
		return "✅", "Results ingested into " + db + "."
	}
}

// headingZH is the Chinese heading after "Ingest 报告 — ".
func headingZH(s *schema.Summary, esc func(string) string) string {
	db := "数据库"
	if t := oneLine(s.Target, maxInlineRunes); t != "" {
		db = esc(t) + " 数据库"
	}
	if why := noBenchmarkReason(s, esc); why != "" {
		if s.DryRun {
			return "⚠️ 本次运行没有 benchmark 数据：" + why + "。试运行，未写入任何数据。"
		}
		return "⚠️ 本次运行没有 benchmark 数据：" + why + "。其余数据已写入 " + db + "。"
	}
	reason := abortReason(s, esc)
	switch outcomeOf(s) {
	case outcomePurged:
		return "🚫 " + purgedHeading(s, esc, purgedZH())
	case outcomeDryRun:
		if s.Status == schema.StatusAborted {
			if reason == "" {
				return "🔎 试运行失败，未写入任何数据。"
			}
			return "🔎 试运行失败：" + reason + "。未写入任何数据。"
		}
		return "🔎 试运行（dry run）— 未写入任何数据。"
	case outcomeAborted:
		if reason == "" {
			return "❌ Ingest 失败，已回滚，未写入任何数据。"
		}
		return "❌ Ingest 失败：" + reason + "。已回滚，未写入任何数据。"
	case outcomeWithFailures:
		if n := failureTotal(s); n > 0 {
			return fmt.Sprintf("⚠️ 结果已写入 %s，其中 %d 项失败。", db, n)
		}
		return "⚠️ 结果已写入 " + db + "，但有部分失败。"
	default:
		return "✅ 结果已写入 " + db + "。"
	}
}

// purgedWords are the phrases of a purged run's heading in one language.
type purgedWords struct {
	run                  string // run id, attempt
	open, close          string // around the reason
	nothing, nothingDry  string
	deleted, wouldDelete string // stored rows deleted
}

// purgedEN and purgedZH are the phrases in English and Chinese.
func purgedEN() purgedWords {
	return purgedWords{run: "Run %d attempt %d is purged by the run overrides", open: " (", close: ")",
		nothing: ": nothing was written.", nothingDry: ": nothing was written (dry run).",
		deleted: " %d stored rows of earlier ingests were deleted.", wouldDelete: " %d stored rows of earlier ingests would be deleted."}
}

func purgedZH() purgedWords {
	return purgedWords{run: "运行 %d 第 %d 次尝试已被 run overrides 清除", open: "（", close: "）",
		nothing: "：未写入任何数据。", nothingDry: "：未写入任何数据（试运行）。",
		deleted: "此前 ingest 写入的 %d 行已删除。", wouldDelete: "此前 ingest 写入的 %d 行将被删除。"}
}

// purgedHeading is the heading sentence of a purged run: the attempt, the
// ledger entry's reason, and what of earlier ingests went.
func purgedHeading(s *schema.Summary, esc func(string) string, w purgedWords) string {
	b := fmt.Sprintf(w.run, s.Run.SourceRunID, s.Run.SourceRunAttempt)
	if r := strings.TrimSpace(oneLine(s.Details.PurgeReason, maxInlineRunes)); r != "" {
		b += w.open + esc(r) + w.close
	}
	nothing, deleted := w.nothing, w.deleted
	if s.DryRun {
		nothing, deleted = w.nothingDry, w.wouldDelete
	}
	b += nothing
	if n := s.Details.OverrideRowsDeleted; n > 0 {
		b += fmt.Sprintf(deleted, n)
	}
	return b
}

// footerEN is the sentence that closes the English part.
func footerEN(o outcome) string {
	const rows = "Rows: benchmark_results, eval_results, agentic rows linked to a trace, gpu_metrics series."
	const rerun = "This comment updates if the ingest is rerun."
	switch o {
	case outcomeDryRun:
		return "Counts cover only this run and show what would have been written; nothing was. " + rows + " " + rerun
	case outcomeAborted:
		return "Counts cover only this run and show what was processed before the rollback; nothing was kept. " + rows + " " + rerun
	case outcomePurged:
		return "Counts are zero: the run overrides purge this run, so nothing of it is read or written. " + rows + " " + rerun
	default:
		return "Counts cover only this run. " + rows + " " + rerun
	}
}

// footerZH is the Chinese translation of footerEN.
func footerZH(o outcome) string {
	const rows = "各行单位依次为 benchmark_results 行、eval_results 行、已关联 trace 的 agentic 行和 gpu_metrics 序列。"
	const rerun = "重新运行 ingest 时本评论会原地更新。"
	switch o {
	case outcomeDryRun:
		return "上表仅统计本次运行在试运行中将会写入的数据（实际未写入），" + rows + rerun
	case outcomeAborted:
		return "上表仅统计本次运行在回滚前处理的数据（均未保留），" + rows + rerun
	case outcomePurged:
		return "本次运行已被 run overrides 清除，不读取也不写入任何数据，上表计数均为零。" + rows + rerun
	default:
		return "上表仅统计本次运行写入的数据，" + rows + rerun
	}
}

// AbortNote is the job summary of a command that stopped before it had a
// report to render (a database it cannot reach or write, a fetch that
// failed before the ledger could be opened): the failed headline, in
// English and Chinese, with the reason escaped as input is.
func AbortNote(reason string) string {
	r := mdInline(strings.TrimSuffix(strings.TrimSpace(reason), "."))
	return "Ingest report — ❌ Ingest failed: " + r + ". Nothing was written.\n\nIngest 报告 — ❌ Ingest 失败：" + r + "。未写入任何数据。\n"
}
