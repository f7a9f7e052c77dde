package promotion

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/schema"
)

// Staged is what the staging ledger keeps of the staged ingest of a run.
type Staged struct {
	IngestID int64
	Target   string
	// Attempt is the run attempt the staged ingest read.
	Attempt int
	// Server is the server and database it was written to (nil when it
	// predates their record).
	Server *schema.ServerIdentity
	// TreeDigest is the staged ingest's publication.treeDigest ("" when
	// it predates them).
	TreeDigest string
	// Artifacts are its ledger artifact records.
	Artifacts json.RawMessage
	// FileIndex is the file index of its tree digest (source.FileSums):
	// every file's path and sha256 (nil when it recorded none).
	FileIndex []byte
}

// Input is what the promotion read: the run attempt, the tree's digest
// and file index, and the ledger's artifact records.
type Input struct {
	Attempt   int
	Tree      []byte
	FileIndex []byte
	Records   json.RawMessage
}

// record is the part of a ledger artifact record (runstate.Record) that
// says which bytes were read.
type record struct {
	Name        string `json:"name"`
	Container   string `json:"container"`
	Size        int64  `json:"size"`
	Digest      string `json:"digest"`
	FilesDigest string `json:"filesDigest"`
	FilesRead   int    `json:"filesRead"`
	Error       string `json:"error"`
}

// TreeDigest is how a tree's digest is written in a publication section.
func TreeDigest(sum []byte) string {
	if len(sum) == 0 {
		return ""
	}
	return "sha256:" + hex.EncodeToString(sum)
}

// Compare is the publication section of a promotion that read in,
// against the staged ingest. Inputs are the same when the run attempts are,
// both tree digests are known and equal and every artifact record matches;
// otherwise every difference is listed: the attempt, each artifact added,
// removed or changed, and — where both file indexes are known — each file
// that differs, under the artifact holding it.
func Compare(staged Staged, in Input) (schema.Publication, error) {
	pub := schema.Publication{Kind: schema.PublicationPromotion, TreeDigest: TreeDigest(in.Tree), StagedTarget: staged.Target,
		StagedIngestID: staged.IngestID}
	mine, err := decode(in.Records)
	if err != nil {
		return pub, fmt.Errorf("this ingest's artifact records: %w", err)
	}
	theirs, err := decode(staged.Artifacts)
	if err != nil {
		return pub, fmt.Errorf("the artifact records of staged ingest #%d: %w", staged.IngestID, err)
	}
	files := fileChanges(staged.FileIndex, in.FileIndex, mine, theirs)
	for name, m := range mine {
		s, ok := theirs[name]
		if !ok {
			pub.Differences = append(pub.Differences, schema.ArtifactDifference{Artifact: name, Change: "added"})
			continue
		}
		d := difference(s, m)
		if f := files[name]; len(f) > 0 {
			d = strings.TrimPrefix(d+"; "+strings.Join(f, ", "), "; ")
		}
		if d != "" {
			pub.Differences = append(pub.Differences, schema.ArtifactDifference{Artifact: name, Change: "changed", Detail: d})
		}
	}
	for name := range theirs {
		if _, ok := mine[name]; !ok {
			pub.Differences = append(pub.Differences, schema.ArtifactDifference{Artifact: name, Change: "removed"})
		}
	}
	sort.Slice(pub.Differences, func(i, j int) bool { return pub.Differences[i].Artifact < pub.Differences[j].Artifact })
	if f := files[""]; len(f) > 0 {
		pub.Differences = append(pub.Differences, schema.ArtifactDifference{Artifact: "(tree)", Change: "changed",
			Detail: strings.Join(f, ", ") + " (outside the artifacts)"})
	}
	if staged.Attempt != 0 && in.Attempt != staged.Attempt {
		pub.Differences = append([]schema.ArtifactDifference{{Artifact: "(run)", Change: "changed",
			Detail: fmt.Sprintf("attempt %d, staged attempt %d", in.Attempt, staged.Attempt)}}, pub.Differences...)
	}
	switch {
	case staged.TreeDigest == "" || pub.TreeDigest == "":
		pub.Differences = append(pub.Differences, schema.ArtifactDifference{Artifact: "(tree)", Change: "unknown",
			Detail: "no tree digest to compare: the staged ingest or this one did not record one"})
	case staged.TreeDigest != pub.TreeDigest && len(pub.Differences) == 0:
		// Every artifact read is the same and no file index says which
		// file is not (the staged ingest recorded none).
		pub.Differences = append(pub.Differences, schema.ArtifactDifference{Artifact: "(tree)", Change: "changed",
			Detail: "the tree digest differs: a file outside the artifacts read (such as artifacts.json) changed"})
	}
	pub.SameInputs = len(pub.Differences) == 0
	return pub, nil
}

// fileChanges lists the files that differ between the staged tree's file
// index and this one's ("file F changed", "file F added", "file F
// removed"), by the artifact holding them (a tree's top-level folder or zip
// named by an artifact record); files outside every artifact under "".
// Nil when either index is unknown.
func fileChanges(staged, now []byte, mine, theirs map[string]record) map[string][]string {
	was, is := source.FileSums(staged), source.FileSums(now)
	if was == nil || is == nil {
		return nil
	}
	out := map[string][]string{}
	note := func(path, change string) {
		top, rest, inside := strings.Cut(path, "/")
		art := ""
		for _, name := range []string{top, strings.TrimSuffix(top, ".zip")} {
			if _, ok := mine[name]; ok {
				art = name
			} else if _, ok := theirs[name]; ok {
				art = name
			}
		}
		if art == "" || !inside {
			rest = path
		}
		out[art] = append(out[art], "file "+rest+" "+change)
	}
	paths := make([]string, 0, len(is))
	for p := range is {
		paths = append(paths, p)
	}
	for p := range was {
		if _, ok := is[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		a, inWas := was[p]
		b, inIs := is[p]
		switch {
		case !inWas:
			note(p, "added")
		case !inIs:
			note(p, "removed")
		case a != b:
			note(p, "changed")
		}
	}
	return out
}

// decode reads ledger artifact records by name; a name recorded twice
// (never, in a valid tree) keeps its last record.
func decode(raw json.RawMessage) (map[string]record, error) {
	out := map[string]record{}
	if len(raw) == 0 {
		return out, nil
	}
	var recs []record
	if err := json.Unmarshal(raw, &recs); err != nil {
		return nil, err
	}
	for _, r := range recs {
		out[r.Name] = r
	}
	return out, nil
}

// difference says how two records of an artifact differ ("" for not).
func difference(staged, now record) string {
	var parts []string
	if staged.Container != now.Container {
		parts = append(parts, fmt.Sprintf("container %s, staged %s", now.Container, staged.Container))
	}
	if staged.Size != now.Size {
		parts = append(parts, fmt.Sprintf("size %d, staged %d", now.Size, staged.Size))
	}
	if staged.Digest != now.Digest {
		parts = append(parts, "zip digest differs")
	}
	if staged.FilesRead != now.FilesRead {
		parts = append(parts, fmt.Sprintf("%d files read, staged %d", now.FilesRead, staged.FilesRead))
	} else if staged.FilesDigest != now.FilesDigest {
		parts = append(parts, "file contents differ")
	}
	if staged.Error != now.Error {
		switch {
		case now.Error == "":
			parts = append(parts, "readable now, staged: "+staged.Error)
		case staged.Error == "":
			parts = append(parts, "unreadable now: "+now.Error)
		default:
			parts = append(parts, "another error: "+now.Error)
		}
	}
	return strings.Join(parts, "; ")
}
