package github

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// ChangelogArtifact is the artifact whose copy a reused ingest takes from
// the merge run.
const ChangelogArtifact = "changelog-metadata"

// ErrNoArtifacts is the error of a run that has no unexpired artifact
// left: nothing of it can be ingested any more (GitHub keeps artifacts
// for a retention period, 90 days by default).
var ErrNoArtifacts = errors.New("no unexpired artifacts")

// safeName is an artifact name that is safe as a file name at the tree
// root (the names package source accepts).
var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)

// maxTreeName is the longest name of a run tree entry: a file name may
// have 255 bytes, and the entry is NAME.zip.
const maxTreeName = 255 - len(".zip")

// localName is the stem of an artifact's zip in the run tree: its name
// when that is a safe file name short enough, else "artifact+ID" (which
// no safe name of the same shape can take: GitHub ids are unique), which
// the tree's names file (source.NamesFile) maps back to the name.
func localName(a schema.ArtifactListing) string {
	if safeName.MatchString(a.Name) && len(a.Name) <= maxTreeName && !strings.HasPrefix(a.Name, "artifact+") {
		return a.Name
	}
	return fmt.Sprintf("artifact+%d", a.ID)
}

// Select picks the artifacts to ingest: per exact name the newest
// unexpired upload of the source run (created_at, ties to the larger id).
// When the merge run differs (a reused sweep), the source's
// changelog-metadata is dropped and the merge run's newest unexpired one
// is taken instead. It fails when the source run has no unexpired
// artifact or when the merge run has no changelog-metadata; a name that
// is no safe file name is selected all the same (the run tree holds it
// under a safe local name, see localName). The result is sorted by name.
func Select(sourceRunID, mergeRunID int64, source, merge []schema.ArtifactListing) ([]schema.ArtifactListing, error) {
	reused := mergeRunID != 0 && mergeRunID != sourceRunID
	picked := newestPerName(source, func(name string) bool { return !reused || name != ChangelogArtifact })
	if len(picked) == 0 {
		expired := 0
		for _, a := range source {
			if a.Expired {
				expired++
			}
		}
		return nil, fmt.Errorf("%w found on source run %d (%d listed, %d expired)", ErrNoArtifacts, sourceRunID, len(source), expired)
	}
	if reused {
		cl := newestPerName(merge, func(name string) bool { return name == ChangelogArtifact })
		if len(cl) == 0 {
			return nil, fmt.Errorf("no unexpired %s artifact found on merge run %d: a reused sweep takes its changelog from the merge run", ChangelogArtifact, mergeRunID)
		}
		picked = append(picked, cl...)
	}
	slices.SortFunc(picked, func(a, b schema.ArtifactListing) int { return strings.Compare(a.Name, b.Name) })
	for _, a := range picked {
		if a.ID <= 0 {
			return nil, fmt.Errorf("artifact %q: no id in the listing", a.Name)
		}
	}
	return picked, nil
}

// newestPerName keeps, per name that keep accepts, the newest unexpired
// entry.
func newestPerName(list []schema.ArtifactListing, keep func(string) bool) []schema.ArtifactListing {
	best := map[string]int{}
	for i, a := range list {
		if a.Expired || !keep(a.Name) {
			continue
		}
		j, ok := best[a.Name]
		if !ok || newer(a, list[j]) {
			best[a.Name] = i
		}
	}
	out := make([]schema.ArtifactListing, 0, len(best))
	for _, i := range best {
		out = append(out, list[i])
	}
	return out
}

func newer(a, b schema.ArtifactListing) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID > b.ID
}
