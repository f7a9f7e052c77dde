package source

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"regexp"
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

// readListing reads, parses and validates the listing file at path (name
// is its base name, ListingFile or ManifestFile). It fails on anything
// that is not a regular file, is not the JSON of a listing, or does not
// validate: an ingest without a trustworthy listing would order retries
// wrongly and check no zip's digest.
func readListing(path, name string) (listingDoc, error) {
	f, err := os.Open(path)
	if err != nil {
		return listingDoc{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return listingDoc{}, err
	}
	if !info.Mode().IsRegular() {
		return listingDoc{}, errors.New(notRegularListing(info.Mode()))
	}
	requireID := name == ListingFile
	data, err := readAll(f, info.Size())
	if err != nil {
		// Let the decoder meet the read error, as it always has.
		if _, serr := f.Seek(0, io.SeekStart); serr != nil {
			return listingDoc{}, fmt.Errorf("invalid JSON: %w", err)
		}
		return parseListing(bufio.NewReader(f), requireID)
	}
	return parseListingData(data, requireID)
}

// readAll reads r to its end into one buffer sized for size bytes.
func readAll(r io.Reader, size int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, min(max(size, 0), 1<<30)+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

// parseListingData parses a listing read whole: by parseListingFast when
// it can, else by parseListing, which makes every error.
func parseListingData(data []byte, requireID bool) (listingDoc, error) {
	if doc, ok := parseListingFast(data, requireID); ok {
		return doc, nil
	}
	return parseListing(bytes.NewReader(data), requireID)
}

// notRegularListing says what a listing path is instead of a regular file.
func notRegularListing(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "not a regular file: symbolic link"
	case m.IsDir():
		return "not a regular file: directory"
	}
	return notRegular(m)
}

// parseListing accepts a sequence of JSON values, each one of: a REST
// response page {"total_count", "artifacts": […], "run": {…}}, a bare
// array of artifact objects, or a single artifact object (as printed by
// `gh api --paginate --jq '.artifacts[]'`). Entries keep their order. When
// no run object says so, the run id, head branch and head sha come from
// the artifacts' workflow_run.
//
// Every entry is validated: a name; an id, positive (required when
// requireID: GitHub's listing always carries one; the reference manifest
// may omit it) and listed once; a size that is not negative; a digest that
// is null or "sha256:" and 64 hex digits; created_at null or RFC 3339.
// The run object's id and run_attempt must be in range. Several entries
// may share a name: a retried job uploads it again.
func parseListing(r io.Reader, requireID bool) (listingDoc, error) {
	b := newListingBuilder(requireID, 0)
	values := 0
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
		if err := b.addRun(run); err != nil {
			return listingDoc{}, err
		}
		for _, item := range artifacts {
			w, err := decodeArtifact(item)
			if err != nil {
				return listingDoc{}, fmt.Errorf("artifact %d: %w", len(b.doc.entries), err)
			}
			if err := b.add(&w); err != nil {
				return listingDoc{}, err
			}
		}
	}
	if values == 0 {
		return listingDoc{}, errors.New("empty file")
	}
	return b.finish(), nil
}

// listingBuilder validates decoded artifacts and run objects in listing
// order and collects the listingDoc; parseListing and parseListingFast
// share it.
type listingBuilder struct {
	requireID bool
	doc       listingDoc
	fromWR    schema.RunMeta
	ids       map[int64]int
}

func newListingBuilder(requireID bool, n int) *listingBuilder {
	b := &listingBuilder{requireID: requireID, ids: make(map[int64]int, n)}
	if n > 0 {
		b.doc.entries = make([]schema.ArtifactListing, 0, n)
	}
	return b
}

// addRun merges a run object, if any, into the run.
func (b *listingBuilder) addRun(run *wireRun) error {
	if run == nil {
		return nil
	}
	meta, err := run.meta()
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	b.doc.run = b.doc.run.Merge(meta)
	return nil
}

// add validates the next artifact and appends its entry.
func (b *listingBuilder) add(w *wireArtifact) error {
	n := len(b.doc.entries)
	e, err := w.entry(b.requireID)
	if err != nil {
		return fmt.Errorf("artifact %d: %w", n, err)
	}
	if e.ID != 0 {
		if first, dup := b.ids[e.ID]; dup {
			return fmt.Errorf("artifact %d: %s: id %d is listed twice (also artifact %d)", n, displayName(e.Name), e.ID, first)
		}
		b.ids[e.ID] = n
	}
	b.doc.entries = append(b.doc.entries, e)
	if wr := w.WorkflowRun; wr != nil && b.fromWR.RunID == 0 && wr.ID != 0 {
		b.fromWR = schema.RunMeta{RunID: wr.ID, HeadBranch: wr.HeadBranch, HeadSHA: wr.HeadSHA}
	}
	return nil
}

// finish fills in what the run object did not say from the artifacts'
// workflow_run and returns the listing.
func (b *listingBuilder) finish() listingDoc {
	b.doc.run = b.doc.run.Merge(b.fromWR)
	if len(b.doc.entries) == 0 {
		b.doc.entries = nil // as when nothing was appended
	}
	return b.doc
}

// wirePageItems is a REST response page whose artifacts are decoded one by
// one, so an error names the entry.
type wirePageItems struct {
	TotalCount int               `json:"total_count"`
	Artifacts  []json.RawMessage `json:"artifacts"`
	Run        *wireRun          `json:"run,omitempty"`
}

// decodeListingValue decodes one top-level JSON value of a listing into
// its artifact objects, still undecoded, and its run object.
func decodeListingValue(raw json.RawMessage) ([]json.RawMessage, *wireRun, error) {
	switch raw[0] {
	case '[':
		var artifacts []json.RawMessage
		if err := json.Unmarshal(raw, &artifacts); err != nil {
			return nil, nil, fmt.Errorf("artifact array: %w", fieldError(err))
		}
		return artifacts, nil, nil
	case '{':
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(raw, &keys); err != nil {
			return nil, nil, fmt.Errorf("object: %w", fieldError(err))
		}
		list, isPage := keys["artifacts"]
		if !isPage {
			if _, ok := keys["name"]; !ok {
				return nil, nil, errors.New(`object has neither an "artifacts" array nor a "name"`)
			}
			return []json.RawMessage{raw}, nil, nil
		}
		if t := bytes.TrimSpace(list); len(t) == 0 || t[0] != '[' {
			return nil, nil, errors.New(`"artifacts" is not an array`)
		}
		var page wirePageItems
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, nil, fmt.Errorf("listing object: %w", fieldError(err))
		}
		if page.TotalCount < 0 {
			return nil, nil, fmt.Errorf("total_count %d is negative", page.TotalCount)
		}
		return page.Artifacts, page.Run, nil
	default:
		return nil, nil, errors.New("top-level value is neither an object nor an array")
	}
}

// decodeArtifact decodes one artifact object.
func decodeArtifact(raw json.RawMessage) (wireArtifact, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return wireArtifact{}, errors.New("not an object")
	}
	var w wireArtifact
	if err := json.Unmarshal(raw, &w); err != nil {
		return wireArtifact{}, fieldError(err)
	}
	return w, nil
}

// fieldError rewords a JSON type error as the field and the types involved
// (encoding/json names the Go struct, which means nothing to the reader).
func fieldError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	want := jsonKind(te.Type)
	if te.Field == "" {
		return fmt.Errorf("%s where %s is expected", te.Value, want)
	}
	return fmt.Errorf("field %q: %s where %s is expected", te.Field, te.Value, want)
}

// jsonKind names what a Go type accepts, in JSON terms.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.Kind().String()
}

// sha256Digest is the only digest form GitHub lists.
var sha256Digest = regexp.MustCompile(`^sha256:[0-9a-fA-F]{64}$`)

func (w wireArtifact) entry(requireID bool) (schema.ArtifactListing, error) {
	if w.Name == "" {
		return schema.ArtifactListing{}, errors.New("no name")
	}
	switch {
	case w.ID < 0:
		return schema.ArtifactListing{}, fmt.Errorf("%s: id %d is negative", displayName(w.Name), w.ID)
	case w.ID == 0 && requireID:
		return schema.ArtifactListing{}, fmt.Errorf("%s: no id", displayName(w.Name))
	case w.SizeInBytes < 0:
		return schema.ArtifactListing{}, fmt.Errorf("%s: size_in_bytes %d is negative", displayName(w.Name), w.SizeInBytes)
	case w.Digest != nil && !sha256Digest.MatchString(*w.Digest):
		return schema.ArtifactListing{}, fmt.Errorf("%s: digest %q is not \"sha256:\" and 64 hex digits", displayName(w.Name), *w.Digest)
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
	if w.ID < 0 {
		return schema.RunMeta{}, fmt.Errorf("id %d is negative", w.ID)
	}
	if w.RunAttempt < 0 || w.RunAttempt > 32767 {
		return schema.RunMeta{}, fmt.Errorf("run_attempt %d is out of range (1 to 32767)", w.RunAttempt)
	}
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
