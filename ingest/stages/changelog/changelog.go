// Package changelog is the changelog stage: the run's changelog-metadata
// is read before the benchmark stage (an evals-only changelog skips it) and
// its entries, or the fallback entry, are written last. It reads the file
// with the format package ingest/changelog, imported as chlog.
package changelog

import (
	"context"
	"errors"
	"fmt"
	"io"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/ingest/benchmark"
	chlog "github.com/inferencex/ingest/ingest/changelog"
	"github.com/inferencex/ingest/ingest/receipt"
	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/schema"
)

// Writer is what the changelog stage needs from the run's transaction.
type Writer interface {
	// WriteChangelog makes the run's changelog entries exactly rows; it
	// returns how many were written (inserted or changed) and removed.
	WriteChangelog(ctx context.Context, rows []schema.ChangelogRow) (written, removed int64, err error)
}

// Read reads the run's changelog-metadata (the merge run's, in a
// reused run): the first usable *.json of the newest upload. Without one
// the run gets the fallback entry described from the merge run's metadata.
func Read(p runstate.Plan, start schema.RunStart, t *runstate.Tally, records *[]*runstate.Record) *runstate.Changelog {
	d := &t.Summary().Details
	for _, a := range p.Artifacts(runstate.KindChangelog) {
		fsys, err := a.FS()
		rec := runstate.NewRecord(a)
		*records = append(*records, rec)
		d.ArtifactsRead++
		for _, pr := range a.Problems {
			t.Fail(schema.CategoryRun, a.Name, pr.File, pr.Reason)
		}
		if err != nil {
			t.Fail(schema.CategoryRun, a.Name, "", err.Error())
			continue
		}
		open := runstate.OpenRecorded(fsys, rec, d)
		for _, file := range runstate.JSONFiles(a) {
			f, err := open(file)
			if err != nil {
				t.Fail(schema.CategoryRun, a.Name, file, fmt.Sprintf("cannot open: %v", err))
				continue
			}
			cl, problems, err := chlog.Parse(f)
			f.Close()
			for _, pr := range problems {
				t.Fail(schema.CategoryRun, a.Name, file, pr.Reason)
			}
			var unusable chlog.ErrUnusable
			switch {
			case errors.As(err, &unusable):
				t.Note(fmt.Sprintf("changelog %s/%s: %s", a.Name, file, unusable.Reason))
				continue
			case err != nil:
				t.Fail(schema.CategoryRun, a.Name, file, err.Error())
				continue
			}
			_ = a.Release()
			return &runstate.Changelog{Log: cl, Artifact: a.Name, File: file}
		}
		_ = a.Release()
	}
	m := start.MergeMeta
	cl := chlog.Fallback(chlog.RunInfo{RunID: start.Run.MergeRunID, Name: m.Name, HeadBranch: m.HeadBranch, HeadSHA: m.HeadSHA})
	t.WriteNote(fmt.Sprintf("no usable changelog-metadata: recorded one fallback changelog entry (%q)", cl.Entries[0].Description))
	return &runstate.Changelog{Log: cl}
}

// SkipForEvalsOnly drops the benchmark and run-stats work of an evals-only
// run. Benchmark rows its artifacts hold anyway are counted as read and
// skipped (never parsed into points); unreadable files count as failed.
func SkipForEvalsOnly(p *runstate.Plan, t *runstate.Tally, records *[]*runstate.Record, log *zap.Logger) {
	sum := t.Summary()
	reader := benchmark.NewReader()
	for _, pa := range p.Benchmark {
		a := pa.Artifact
		fsys, err := a.FS()
		rec := runstate.NewRecord(a)
		*records = append(*records, rec)
		sum.Details.ArtifactsRead++
		itemFailed := func(file, reason string) {
			sum.Stats.BenchmarkFiles++
			sum.Stats.RawBenchmarkRows++
			sum.Rows.Benchmark.Failed++
			t.Fail(schema.CategoryBenchmark, a.Name, file, reason)
		}
		for _, pr := range a.Problems {
			itemFailed(pr.File, pr.Reason)
		}
		if err != nil {
			itemFailed("", err.Error())
			continue
		}
		open := runstate.OpenRecorded(fsys, rec, &sum.Details)
		shape := benchmark.ObjectOrArray
		if pa.Aggregate {
			shape = benchmark.ArrayOnly
		}
		files, _ := runstate.BenchmarkFiles(a)
		for _, file := range files {
			if receipt.IsExecutionRecord(file, nil) {
				sum.Details.ExecutionRecords++ // evidence, never a row
				continue
			}
			f, err := open(file)
			if err != nil {
				itemFailed(file, fmt.Sprintf("cannot open: %v", err))
				continue
			}
			sum.Stats.BenchmarkFiles++
			_, rerr := reader.ReadElements(f, shape, func(*benchmark.Element) error {
				sum.Stats.RawBenchmarkRows++
				sum.Rows.Benchmark.Skipped++
				sum.Details.EvalsOnlySkippedRows++
				return nil
			})
			f.Close()
			if rerr != nil && !errors.Is(rerr, io.EOF) {
				sum.Stats.RawBenchmarkRows++
				sum.Rows.Benchmark.Failed++
				t.Fail(schema.CategoryBenchmark, a.Name, file, rerr.Error())
			}
		}
		_ = a.Release()
	}
	msg := "evals-only run (a changelog entry has evals-only: true): benchmark and run-stats stages skipped"
	if n := sum.Details.EvalsOnlySkippedRows; n > 0 {
		msg += fmt.Sprintf("; %s counted as skipped", runstate.Plural(int(n), "benchmark row", "benchmark rows"))
	}
	if len(p.RunStats) > 0 {
		msg += "; run stats not read"
	}
	t.Note(msg)
	log.Info("evals-only run: benchmark and run-stats stages skipped", zap.Int64("benchmark_rows_skipped", sum.Details.EvalsOnlySkippedRows))
	p.Benchmark, p.RunStats = nil, nil
}

// Run is the changelog stage, the last one: every entry of the run's
// changelog (or its fallback entry), under the run's workflow row, named by
// the merge run it belongs to. It returns what it counted, for the
// summary.
func Run(ctx context.Context, w Writer, env *runstate.Env) (schema.Counters, error) {
	var c schema.Counters
	cl := env.Changelog
	if cl == nil {
		return c, nil
	}
	m := env.Start.MergeMeta
	rows := make([]schema.ChangelogRow, len(cl.Log.Entries))
	for i, e := range cl.Log.Entries {
		rows[i] = schema.ChangelogRow{MergeRunID: env.Start.Run.MergeRunID, MergeRunAttempt: env.Start.Run.MergeRunAttempt,
			MergeRunURL: m.HTMLURL, BaseRef: cl.Log.BaseRef, HeadRef: cl.Log.HeadRef, Index: i,
			ConfigKeys: e.ConfigKeys, Description: e.Description, PRLink: e.PRLink, EvalsOnly: e.EvalsOnly,
			AllEvals: e.AllEvals, AppendOnly: e.AppendOnly, EvalMinPrefillEP: e.EvalMinPrefillEP,
			ScenarioTypes: e.ScenarioTypes, Fallback: cl.Log.Fallback, SourceArtifact: cl.Artifact, SourceFile: cl.File}
	}
	if b, ok := env.Deps.Overrides.ChangelogBackfill(env.Start.Run.SourceRunID, env.Start.Run.SourceRunAttempt, cl.Log.BaseRef, cl.Log.HeadRef); ok {
		if n := b.ApplyTo(rows); n > 0 {
			c.Details.BackfilledChangelogEntries += int64(n)
			env.Tally.WriteNote(fmt.Sprintf("changelog backfill %s corrected %s (%s)", b.ID,
				runstate.Plural(n, "changelog entry", "changelog entries"), b.Reason))
		}
	}
	written, removed, err := w.WriteChangelog(ctx, rows)
	if err != nil {
		return c, err
	}
	c.Stats.ChangelogEntriesWritten += written
	if removed > 0 {
		env.Tally.WriteNote(runstate.Plural(int(removed), "changelog entry", "changelog entries") + runstate.NoteChangelogRemoved)
	}
	return c, nil
}
