package ingest

import (
	"fmt"
	"strings"

	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// maxNoteNames bounds the names one note lists.
const maxNoteNames = 20

// noteAbsent counts and reports the listed artifacts the tree lacks:
// expired ones in a note, missing ones in a note and each as a run failure.
// It returns how many of each are benchmark artifacts.
func noteAbsent(t *runstate.Tally, tree *source.Tree) (expiredBenchmark, missingBenchmark int) {
	expired, missing := tree.Absent()
	d := &t.Summary().Details
	d.ExpiredArtifacts = int64(len(expired))
	d.MissingArtifacts = int64(len(missing))
	if len(expired) > 0 {
		t.Note(fmt.Sprintf("%s expired on GitHub and could not be read: %s",
			runstate.Plural(len(expired), "listed artifact has", "listed artifacts have"), nameList(expired)))
	}
	if len(missing) > 0 {
		t.Note(fmt.Sprintf("%s in %s but not in the tree: %s",
			runstate.Plural(len(missing), "artifact is listed", "artifacts are listed"), tree.ListingName, nameList(missing)))
	}
	for _, name := range missing {
		t.Fail(schema.CategoryRun, name, "", "listed in "+tree.ListingName+" but not in the tree")
	}
	return countBenchmark(expired), countBenchmark(missing)
}

func countBenchmark(names []string) int {
	n := 0
	for _, name := range names {
		if k := runstate.Classify(name); k == runstate.KindPerJob || k == runstate.KindAggregate {
			n++
		}
	}
	return n
}

// nameList joins names, at most maxNoteNames of them.
func nameList(names []string) string {
	if len(names) <= maxNoteNames {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxNoteNames], ", ") + fmt.Sprintf(" … and %d more", len(names)-maxNoteNames)
}

// noBenchmarkData says why a run yielded no benchmark data — nothing new
// and nothing already stored — or "" when it did. present is the benchmark
// artifacts in the tree; expired and missing those the listing names that
// the tree lacks. The reason ends without a period (the headline adds it).
func noBenchmarkData(rows schema.Counts, present, expired, missing int, listing string) string {
	if rows.New+rows.Duplicate > 0 {
		return ""
	}
	var gone []string
	if expired > 0 {
		gone = append(gone, fmt.Sprintf("%d expired", expired))
	}
	if missing > 0 {
		gone = append(gone, fmt.Sprintf("%d listed in %s but not in the tree", missing, listing))
	}
	if present == 0 {
		switch {
		case expired == 1 && missing == 0:
			return "its only benchmark artifact has expired"
		case expired > 0 && missing == 0:
			return fmt.Sprintf("all %d benchmark artifacts have expired", expired)
		case len(gone) > 0:
			return "no benchmark artifact is in the tree (" + strings.Join(gone, ", ") + ")"
		}
		return "the run has no benchmark artifact (bmk_*, results_*)"
	}
	var why string
	switch n := rows.Total(); {
	case n == 0:
		why = fmt.Sprintf("its %s no benchmark rows", runstate.Plural(present, "benchmark artifact holds", "benchmark artifacts hold"))
	case rows.Failed == n && n == 1:
		why = "its only benchmark item failed"
	case rows.Failed == n:
		why = fmt.Sprintf("all %d benchmark items failed", n)
	default:
		var parts []string
		for _, c := range []struct {
			n    int64
			what string
		}{{rows.Failed, "failed"}, {rows.Unmapped, "unmapped"}, {rows.Skipped, "skipped"}} {
			if c.n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
			}
		}
		why = fmt.Sprintf("none of its %d benchmark items landed (%s)", n, strings.Join(parts, ", "))
	}
	if len(gone) > 0 {
		why += "; " + runstate.Plural(expired+missing, "more benchmark artifact is", "more benchmark artifacts are") + " absent (" + strings.Join(gone, ", ") + ")"
	}
	return why
}
