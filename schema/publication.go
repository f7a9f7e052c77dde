package schema

// Publication says where an ingest stands in the publication workflow:
// a staged ingest (into a target other than production), or a promotion
// (an ingest into production compared with the staged ingest of the same
// source run). Nil for an ingest that is neither (production, no staging
// target configured).
type Publication struct {
	// Kind is PublicationStaged or PublicationPromotion.
	Kind string `json:"kind"`
	// TreeDigest is the sha256 of the run tree the ingest read
	// ("sha256:…"): every file's path and bytes (source.StartDigest). A
	// promotion compares it with the staged ingest's.
	TreeDigest string `json:"treeDigest,omitempty"`
	// StagedTarget is the target a promotion compared with.
	StagedTarget string `json:"stagedTarget,omitempty"`
	// StagedIngestID is the staged ingest compared with (0: none found).
	StagedIngestID int64 `json:"stagedIngestId,omitempty"`
	// SameInputs: the tree and every artifact record are the staged
	// ingest's.
	SameInputs bool `json:"sameInputs"`
	// Differences lists what differs from the staged ingest, by artifact.
	Differences []ArtifactDifference `json:"differences,omitempty"`
	// NotCompared says why a promotion has nothing to compare with (no
	// staged ingest of the run, or one recorded before tree digests were).
	NotCompared string `json:"notCompared,omitempty"`
}

// Publication kinds.
const (
	PublicationStaged    = "staged"
	PublicationPromotion = "promotion"
)

// ArtifactDifference is one artifact that differs between a staged ingest
// and its promotion: Change is "added" (only in the promotion), "removed"
// (only in the staged ingest) or "changed"; Detail says what changed.
type ArtifactDifference struct {
	Artifact string `json:"artifact"`
	Change   string `json:"change"`
	Detail   string `json:"detail,omitempty"`
}
