package schema

import "fmt"

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
	// Server is the server and database a staged ingest was written to,
	// as they named themselves (nil before it was recorded): a promotion
	// refuses a staged ingest written to production's.
	Server *ServerIdentity `json:"server,omitempty"`
}

// ServerIdentity is what a PostgreSQL server and database say they are,
// whatever URL reached them: the cluster's system identifier (when the
// role may read pg_control_system), the port it listens on, when its
// postmaster started, and the database. Host names are not part of it:
// 127.0.0.1, localhost and a Unix socket reach one server.
type ServerIdentity struct {
	SystemID string `json:"systemId,omitempty"`
	Port     int    `json:"port"`
	// Started is the postmaster's start time (RFC 3339, UTC, to the
	// microsecond): with the port it tells two clusters apart even where
	// the system identifier is shared (a cluster cloned from a base
	// backup) or cannot be read.
	Started  string `json:"started"`
	Database string `json:"database"`
}

// Same reports whether two identities name one database of one running
// cluster: the same database, port and start time, and the same system
// identifier where both could read it.
func (a ServerIdentity) Same(b ServerIdentity) bool {
	if a.SystemID != "" && b.SystemID != "" && a.SystemID != b.SystemID {
		return false
	}
	return a.Database == b.Database && a.Port == b.Port && a.Started == b.Started
}

// String names the identity in messages.
func (a ServerIdentity) String() string {
	s := fmt.Sprintf("database %s on the server of port %d started %s", a.Database, a.Port, a.Started)
	if a.SystemID != "" {
		s += ", system identifier " + a.SystemID
	}
	return s
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
