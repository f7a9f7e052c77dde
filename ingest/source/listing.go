package source

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/inferencex/ingest/ingest/strictjson"
	"github.com/inferencex/ingest/schema"
)

// Listing file names recognised at the tree root.
const (
	// ListingFile holds the GitHub artifact listing, written by WriteListing
	// (or saved from the REST API).
	ListingFile = "artifacts.json"
	// ManifestFile is the reference ingest's listing, read only when
	// ListingFile is absent.
	ManifestFile = "ingest-artifact-manifest.json"
)

// wireArtifact is one artifact object of the GitHub REST listing; the
// reference manifest uses a subset of it. Unknown fields are ignored.
type wireArtifact struct {
	ID                 int64            `json:"id"`
	Name               string           `json:"name"`
	CreatedAt          *string          `json:"created_at"`
	SizeInBytes        int64            `json:"size_in_bytes"`
	Digest             *string          `json:"digest,omitempty"`
	Expired            bool             `json:"expired"`
	ArchiveDownloadURL string           `json:"archive_download_url,omitempty"`
	WorkflowRun        *wireWorkflowRun `json:"workflow_run,omitempty"`
}

type wireWorkflowRun struct {
	ID         int64  `json:"id,omitempty"`
	HeadBranch string `json:"head_branch,omitempty"`
	HeadSHA    string `json:"head_sha,omitempty"`
}

// wireRun is the optional "run" object: GitHub workflow-run fields.
type wireRun struct {
	ID           int64   `json:"id,omitempty"`
	RunAttempt   int     `json:"run_attempt,omitempty"`
	Name         string  `json:"name,omitempty"`
	Event        string  `json:"event,omitempty"`
	Status       string  `json:"status,omitempty"`
	Conclusion   string  `json:"conclusion,omitempty"`
	HeadSHA      string  `json:"head_sha,omitempty"`
	HeadBranch   string  `json:"head_branch,omitempty"`
	HTMLURL      string  `json:"html_url,omitempty"`
	CreatedAt    *string `json:"created_at,omitempty"`
	RunStartedAt *string `json:"run_started_at,omitempty"`
}

// wirePage is the GitHub REST response, plus our optional "run" object.
type wirePage struct {
	TotalCount int            `json:"total_count"`
	Artifacts  []wireArtifact `json:"artifacts"`
	Run        *wireRun       `json:"run,omitempty"`
}

// listingDoc is a parsed listing.
type listingDoc struct {
	entries []schema.ArtifactListing
	run     schema.RunMeta
}

// readListing reads and parses the listing file at path.
func readListing(path string) (listingDoc, error) {
	f, err := os.Open(path)
	if err != nil {
		return listingDoc{}, err
	}
	defer f.Close()
	return parseListing(bufio.NewReader(f))
}

// parseListing accepts a sequence of JSON values, each one of: a REST
// response page {"total_count", "artifacts": […], "run": {…}}, a bare
// array of artifact objects, or a single artifact object (as printed by
// `gh api --paginate --jq '.artifacts[]'`). Entries keep their order. When
// no run object says so, the run id, head branch and head sha come from
// the artifacts' workflow_run.
func parseListing(r io.Reader) (listingDoc, error) {
	var (
		doc    listingDoc
		fromWR schema.RunMeta
		values int
	)
	dec := json.NewDecoder(r)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return listingDoc{}, fmt.Errorf("invalid JSON: %w", err)
		}
		values++
		if err := strictjson.Check(raw); err != nil {
			return listingDoc{}, err
		}
		artifacts, run, err := decodeListingValue(raw)
		if err != nil {
			return listingDoc{}, err
		}
		if run != nil {
			meta, err := run.meta()
			if err != nil {
				return listingDoc{}, fmt.Errorf("run: %w", err)
			}
			doc.run = doc.run.Merge(meta)
		}
		for _, w := range artifacts {
			n := len(doc.entries)
			e, err := w.entry()
			if err != nil {
				return listingDoc{}, fmt.Errorf("artifact %d: %w", n, err)
			}
			doc.entries = append(doc.entries, e)
			if wr := w.WorkflowRun; wr != nil && fromWR.RunID == 0 && wr.ID != 0 {
				fromWR = schema.RunMeta{RunID: wr.ID, HeadBranch: wr.HeadBranch, HeadSHA: wr.HeadSHA}
			}
		}
	}
	if values == 0 {
		return listingDoc{}, errors.New("empty file")
	}
	doc.run = doc.run.Merge(fromWR)
	return doc, nil
}

// decodeListingValue decodes one top-level JSON value of a listing.
func decodeListingValue(raw json.RawMessage) ([]wireArtifact, *wireRun, error) {
	switch raw[0] {
	case '[':
		var artifacts []wireArtifact
		if err := json.Unmarshal(raw, &artifacts); err != nil {
			return nil, nil, fmt.Errorf("artifact array: %w", err)
		}
		return artifacts, nil, nil
	case '{':
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(raw, &keys); err != nil {
			return nil, nil, fmt.Errorf("object: %w", err)
		}
		list, isPage := keys["artifacts"]
		if !isPage {
			if _, ok := keys["name"]; !ok {
				return nil, nil, errors.New(`object has neither an "artifacts" array nor a "name"`)
			}
			var a wireArtifact
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, nil, fmt.Errorf("artifact object: %w", err)
			}
			return []wireArtifact{a}, nil, nil
		}
		if t := bytes.TrimSpace(list); len(t) == 0 || t[0] != '[' {
			return nil, nil, errors.New(`"artifacts" is not an array`)
		}
		var page wirePage
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, nil, fmt.Errorf("listing object: %w", err)
		}
		return page.Artifacts, page.Run, nil
	default:
		return nil, nil, errors.New("top-level value is neither an object nor an array")
	}
}

func (w wireArtifact) entry() (schema.ArtifactListing, error) {
	if w.Name == "" {
		return schema.ArtifactListing{}, errors.New("no name")
	}
	created, err := parseTime(w.CreatedAt)
	if err != nil {
		return schema.ArtifactListing{}, fmt.Errorf("%s: created_at: %w", displayName(w.Name), err)
	}
	e := schema.ArtifactListing{
		ID:          w.ID,
		Name:        w.Name,
		CreatedAt:   created,
		SizeInBytes: w.SizeInBytes,
		Expired:     w.Expired,
	}
	if w.Digest != nil {
		e.Digest = *w.Digest
	}
	return e, nil
}

func (w wireRun) meta() (schema.RunMeta, error) {
	created, err := parseTime(w.CreatedAt)
	if err != nil {
		return schema.RunMeta{}, fmt.Errorf("created_at: %w", err)
	}
	started, err := parseTime(w.RunStartedAt)
	if err != nil {
		return schema.RunMeta{}, fmt.Errorf("run_started_at: %w", err)
	}
	return schema.RunMeta{
		RunID:        w.ID,
		RunAttempt:   w.RunAttempt,
		Name:         w.Name,
		Event:        w.Event,
		Status:       w.Status,
		Conclusion:   w.Conclusion,
		HeadSHA:      w.HeadSHA,
		HeadBranch:   w.HeadBranch,
		HTMLURL:      w.HTMLURL,
		CreatedAt:    created,
		RunStartedAt: started,
	}, nil
}

// parseTime parses an RFC 3339 timestamp as UTC; null or "" is unknown.
func parseTime(s *string) (time.Time, error) {
	if s == nil || *s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, *s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// formatTime is parseTime's inverse: nil for an unknown time.
func formatTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}
