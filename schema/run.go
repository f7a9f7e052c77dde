package schema

import (
	"fmt"
	"time"
)

// ArtifactListing is one entry of the GitHub artifact listing
// (GET /repos/{owner}/{repo}/actions/runs/{id}/artifacts), as kept in a
// tree's artifacts.json.
type ArtifactListing struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	CreatedAt   time.Time `json:"created_at"`
	SizeInBytes int64     `json:"size_in_bytes"`
	// Digest is GitHub's "sha256:<hex>" of the artifact zip, when known.
	Digest  string `json:"digest,omitempty"`
	Expired bool   `json:"expired"`
}

// RunMeta is what is known about a workflow run besides its artifacts.
// Empty strings and zero times mean unknown.
type RunMeta struct {
	RunID        int64     `json:"id,omitempty"`
	RunAttempt   int       `json:"run_attempt,omitempty"`
	Name         string    `json:"name,omitempty"`
	Event        string    `json:"event,omitempty"`
	Status       string    `json:"status,omitempty"`
	Conclusion   string    `json:"conclusion,omitempty"`
	HeadSHA      string    `json:"head_sha,omitempty"`
	HeadBranch   string    `json:"head_branch,omitempty"`
	HTMLURL      string    `json:"html_url,omitempty"`
	CreatedAt    time.Time `json:"created_at,omitempty"`
	RunStartedAt time.Time `json:"run_started_at,omitempty"`
}

// Merge fills every unknown field of m from other and returns the result.
// Known values are never replaced.
func (m RunMeta) Merge(other RunMeta) RunMeta {
	if m.RunID == 0 {
		m.RunID = other.RunID
	}
	if m.RunAttempt == 0 {
		m.RunAttempt = other.RunAttempt
	}
	pick := func(a, b string) string {
		if a != "" {
			return a
		}
		return b
	}
	m.Name = pick(m.Name, other.Name)
	m.Event = pick(m.Event, other.Event)
	m.Status = pick(m.Status, other.Status)
	m.Conclusion = pick(m.Conclusion, other.Conclusion)
	m.HeadSHA = pick(m.HeadSHA, other.HeadSHA)
	m.HeadBranch = pick(m.HeadBranch, other.HeadBranch)
	m.HTMLURL = pick(m.HTMLURL, other.HTMLURL)
	if m.CreatedAt.IsZero() {
		m.CreatedAt = other.CreatedAt
	}
	if m.RunStartedAt.IsZero() {
		m.RunStartedAt = other.RunStartedAt
	}
	return m
}

// RunURL is the web address of a workflow run of repo ("owner/name"), for
// when the API gave none.
func RunURL(repo string, id int64) string {
	return fmt.Sprintf("https://github.com/%s/actions/runs/%d", repo, id)
}

// PriorIngest is the newest finished ingest of a run, as a rerun of the
// run sees it: the digest of its inputs and whether the data it saw is
// still what the database holds.
type PriorIngest struct {
	// IngestID is 0 when the run has no finished ingest.
	IngestID int64
	// InputDigest is nil for an ingest that recorded none (a dry run
	// records nothing; an ingest by an older build recorded none).
	InputDigest []byte
	// DataUnchanged is true when no transaction but the ingest's own and
	// other runs' ingests has written a data table since the ingest
	// finished.
	DataUnchanged bool
	// Summary is the ingest's report as stored.
	Summary *Summary
	// InputFiles is the file index of the ingest's tree digest (source:
	// each file's metadata and sha256), so that a rerun reads again only
	// the files whose metadata changed. nil when none was recorded.
	InputFiles []byte
}

// Matches says whether a rerun with inputs digest may answer from p.
func (p PriorIngest) Matches(digest []byte) bool {
	return p.IngestID != 0 && p.DataUnchanged && p.Summary != nil && len(digest) > 0 && string(p.InputDigest) == string(digest)
}

// ArchivedRun is what an artifact archive holds of one run: every
// artifact zip it keeps, and what it says of the run.
type ArchivedRun struct {
	// Meta is the run as the archive tells it: from the copier's saved
	// GitHub listing when there is one, else from the object names.
	Meta RunMeta
	// Uploads are the run's artifact zips in the archive, every upload of
	// a name (a re-run's re-uploads too); CreatedAt is zero when the
	// archive does not know it.
	Uploads []ArtifactListing
	// HasMetadata says whether the copier saved GitHub's listing.
	HasMetadata bool
	// Inferred names the facts of Meta read from object names, not from
	// a listing.
	Inferred []string
	// Where is the run's place in the archive (URL and folder), for
	// messages.
	Where string
}
