package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/ingest/ptr"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/strictjson"
)

// Where a reused run's provenance is (docs/formats.md, "Provenance and
// reused sweeps"): the artifact the preparation step writes, or the same
// file nested in the older reused-ingest-artifacts bundle.
const (
	reuseArtifact       = "reused-ingest-metadata"
	reuseFile           = "reuse_source_run.json"
	legacyReuseArtifact = "reused-ingest-artifacts"
	legacyReuseFile     = "reused-ingest-metadata/reuse_source_run.json"
	maxReuseBytes       = 1 << 20
)

// reuseInfo is reuse_source_run.json: the run whose artifacts the tree
// holds (source) and the merge run the ingest was triggered by.
type reuseInfo struct {
	SourceRunID int64
	// SourceRunAttempt and IngestRunAttempt are 0 when the file omits them.
	SourceRunAttempt int
	SourceRunURL     string
	SourcePRNumber   int64
	SourceHeadSHA    string
	IngestRunID      int64
	IngestRunAttempt int
	IngestRunURL     string
	// Artifact and File say where it was read.
	Artifact, File string
}

// flexID is an id or attempt written as a JSON number or a string of
// digits.
type flexID struct {
	set   bool
	value int64
	raw   string
}

func (f *flexID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	f.set, f.raw = true, string(b)
	s := strings.Trim(string(b), `"`)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 || strings.TrimLeft(s, "0123456789") != "" {
		f.value = 0
		return nil // validated by the caller, which names the field
	}
	f.value = v
	return nil
}

type reuseJSON struct {
	SourceRunID      flexID  `json:"source_run_id"`
	SourceRunAttempt flexID  `json:"source_run_attempt"`
	SourceRunURL     *string `json:"source_run_url"`
	SourcePRNumber   flexID  `json:"source_pr_number"`
	SourceHeadSHA    *string `json:"source_head_sha"`
	IngestRunID      flexID  `json:"ingest_run_id"`
	IngestRunAttempt flexID  `json:"ingest_run_attempt"`
	IngestRunURL     *string `json:"ingest_run_url"`
}

// readReuse reads the tree's reuse metadata; nil when the tree has none. A
// file that is present but invalid aborts the ingest: its rows could not
// be attributed truthfully. So does a tree holding both the file and its
// legacy copy when the two disagree.
func readReuse(tree *source.Tree) (*reuseInfo, error) {
	var found *reuseInfo
	for _, loc := range []struct{ artifact, file string }{{reuseArtifact, reuseFile}, {legacyReuseArtifact, legacyReuseFile}} {
		a := tree.Artifact(loc.artifact)
		if a == nil {
			continue
		}
		info, err := readReuseFile(a, loc.file)
		if err != nil {
			return nil, fmt.Errorf("reuse metadata: artifact %s: file %s: %w", loc.artifact, loc.file, err)
		}
		switch {
		case info == nil:
		case found == nil:
			found = info
		case !found.sameRuns(info):
			return nil, fmt.Errorf("reuse metadata: %s/%s (%s) and %s/%s (%s) disagree: the rows cannot be attributed; remove the wrong one",
				found.Artifact, found.File, found.describe(), info.Artifact, info.File, info.describe())
		}
	}
	return found, nil
}

// sameRuns reports whether two reuse files name the same runs.
func (r *reuseInfo) sameRuns(o *reuseInfo) bool {
	return r.SourceRunID == o.SourceRunID && r.SourceRunAttempt == o.SourceRunAttempt &&
		r.IngestRunID == o.IngestRunID && r.IngestRunAttempt == o.IngestRunAttempt
}

func (r *reuseInfo) describe() string {
	attempt := func(a int) string {
		if a == 0 {
			return "attempt unset"
		}
		return fmt.Sprintf("attempt %d", a)
	}
	return fmt.Sprintf("source run %d %s, merge run %d %s", r.SourceRunID, attempt(r.SourceRunAttempt), r.IngestRunID, attempt(r.IngestRunAttempt))
}

func readReuseFile(a *source.Artifact, file string) (*reuseInfo, error) {
	fsys, err := a.FS()
	if err != nil {
		return nil, err
	}
	defer a.Release()
	f, err := fsys.Open(file)
	if err != nil {
		if a.Name == legacyReuseArtifact && isNotExist(err) {
			return nil, nil // an old bundle without the metadata
		}
		return nil, fmt.Errorf("cannot open: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReuseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(data) > maxReuseBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxReuseBytes)
	}
	if err := strictjson.Check(data); err != nil {
		return nil, err
	}
	var raw reuseJSON
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not a reuse metadata object: %v", err)
	}
	// An attempt the file does not give stays 0: artifacts.json or the
	// caller may know it; runStart defaults to 1 only when nothing does.
	info := &reuseInfo{Artifact: a.Name, File: file}
	positive := func(name string, f flexID, required bool) (int64, error) {
		switch {
		case !f.set && required:
			return 0, fmt.Errorf("%s is missing", name)
		case !f.set:
			return 0, nil
		case f.value <= 0:
			return 0, fmt.Errorf("%s %s is not a positive integer", name, f.raw)
		}
		return f.value, nil
	}
	if info.SourceRunID, err = positive("source_run_id", raw.SourceRunID, true); err != nil {
		return nil, err
	}
	if info.IngestRunID, err = positive("ingest_run_id", raw.IngestRunID, true); err != nil {
		return nil, err
	}
	for _, at := range []struct {
		name string
		f    flexID
		dst  *int
	}{{"source_run_attempt", raw.SourceRunAttempt, &info.SourceRunAttempt}, {"ingest_run_attempt", raw.IngestRunAttempt, &info.IngestRunAttempt}} {
		v, err := positive(at.name, at.f, false)
		if err != nil {
			return nil, err
		}
		if v > 32767 {
			return nil, fmt.Errorf("%s %d is out of range", at.name, v)
		}
		if v > 0 {
			*at.dst = int(v)
		}
	}
	if raw.SourcePRNumber.set && raw.SourcePRNumber.value > 0 {
		info.SourcePRNumber = raw.SourcePRNumber.value
	}
	info.SourceRunURL, info.SourceHeadSHA, info.IngestRunURL = strings.TrimSpace(ptr.Deref(raw.SourceRunURL)), strings.TrimSpace(ptr.Deref(raw.SourceHeadSHA)), strings.TrimSpace(ptr.Deref(raw.IngestRunURL))
	return info, nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
