package promotion

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// Staged is what the staging ledger keeps of the staged ingest of a run.
type Staged struct {
	IngestID int64
	Target   string
	// TreeDigest is the staged ingest's publication.treeDigest ("" when
	// it predates them).
	TreeDigest string
	// Artifacts are its ledger artifact records.
	Artifacts json.RawMessage
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

// Compare is the publication section of a promotion whose tree digest is
// tree and whose artifact records are records, against the staged ingest.
// Inputs are the same when both digests are known and equal and every
// artifact record matches; otherwise every artifact added, removed or
// changed is listed, by name.
func Compare(staged Staged, tree []byte, records json.RawMessage) (schema.Publication, error) {
	pub := schema.Publication{Kind: schema.PublicationPromotion, TreeDigest: TreeDigest(tree), StagedTarget: staged.Target,
		StagedIngestID: staged.IngestID}
	mine, err := decode(records)
	if err != nil {
		return pub, fmt.Errorf("this ingest's artifact records: %w", err)
	}
	theirs, err := decode(staged.Artifacts)
	if err != nil {
		return pub, fmt.Errorf("the artifact records of staged ingest #%d: %w", staged.IngestID, err)
	}
	for name, m := range mine {
		s, ok := theirs[name]
		if !ok {
			pub.Differences = append(pub.Differences, schema.ArtifactDifference{Artifact: name, Change: "added"})
			continue
		}
		if d := difference(s, m); d != "" {
			pub.Differences = append(pub.Differences, schema.ArtifactDifference{Artifact: name, Change: "changed", Detail: d})
		}
	}
	for name := range theirs {
		if _, ok := mine[name]; !ok {
			pub.Differences = append(pub.Differences, schema.ArtifactDifference{Artifact: name, Change: "removed"})
		}
	}
	sort.Slice(pub.Differences, func(i, j int) bool { return pub.Differences[i].Artifact < pub.Differences[j].Artifact })
	switch {
	case staged.TreeDigest == "" || pub.TreeDigest == "":
		pub.Differences = append(pub.Differences, schema.ArtifactDifference{Artifact: "(tree)", Change: "unknown",
			Detail: "no tree digest to compare: the staged ingest or this one did not record one"})
	case staged.TreeDigest != pub.TreeDigest && len(pub.Differences) == 0:
		// Every artifact read is the same; something else in the tree
		// (the listing, a file no stage reads) is not.
		pub.Differences = append(pub.Differences, schema.ArtifactDifference{Artifact: "(tree)", Change: "changed",
			Detail: "the tree digest differs: a file outside the artifacts read (such as artifacts.json) changed"})
	}
	pub.SameInputs = len(pub.Differences) == 0
	return pub, nil
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
