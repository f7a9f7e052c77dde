// Package changelog reads a run's changelog-metadata/changelog_metadata.json
// (docs/formats.md, "Changelog"): the base and head refs of the perf-changelog
// diff and every entry it added. Every entry is kept, in file order. A run
// without a usable changelog gets one fallback entry described from its
// metadata.
package changelog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"

	"github.com/inferencex/ingest/ingest/ptr"
	"github.com/inferencex/ingest/ingest/strictjson"
)

// maxBytes bounds a changelog file read into memory (a few KB in practice).
const maxBytes = 4 << 20

// MaxEntries bounds the entries of one changelog file: a diff adds a few
// entries (the whole perf-changelog.yaml has under a thousand), so a file
// with more is refused whole. The bound also keeps the run's changelog rows,
// sent as one jsonb document, far below PostgreSQL's jsonb size limits.
const MaxEntries = 10000

// Entry is one changelog entry.
type Entry struct {
	ConfigKeys       []string `json:"configKeys"`
	Description      string   `json:"description"`
	PRLink           *string  `json:"prLink"`
	EvalsOnly        bool     `json:"evalsOnly"`
	AllEvals         bool     `json:"allEvals"`
	AppendOnly       bool     `json:"appendOnly"`
	EvalMinPrefillEP *int     `json:"evalMinPrefillEp,omitempty"`
	ScenarioTypes    []string `json:"scenarioTypes,omitempty"`
}

// Changelog is the changelog of one run.
type Changelog struct {
	BaseRef string  `json:"baseRef"`
	HeadRef string  `json:"headRef"`
	Entries []Entry `json:"entries"`
	// Fallback marks the entry made up from run metadata.
	Fallback bool `json:"fallback"`
}

// EvalsOnly reports whether any entry is evals-only: the run then has no
// throughput results.
func (c Changelog) EvalsOnly() bool {
	for _, e := range c.Entries {
		if e.EvalsOnly {
			return true
		}
	}
	return false
}

// AppendOnly reports whether every entry is append-only (and there is
// one): the run may then only add points to the published curves.
func (c Changelog) AppendOnly() bool {
	for _, e := range c.Entries {
		if !e.AppendOnly {
			return false
		}
	}
	return len(c.Entries) > 0
}

// Problem is an entry that could not be read; the others still are.
type Problem struct {
	Index  int
	Reason string
}

// ErrUnusable says a file parsed but holds no changelog (no refs or no
// entries): the run falls back to its metadata.
type ErrUnusable struct{ Reason string }

func (e ErrUnusable) Error() string { return e.Reason }

type rawFile struct {
	BaseRef *string           `json:"base_ref"`
	HeadRef *string           `json:"head_ref"`
	Entries []json.RawMessage `json:"entries"`
}

type rawEntry struct {
	ConfigKeys       []string        `json:"config-keys"`
	Description      json.RawMessage `json:"description"`
	PRLink           *string         `json:"pr-link"`
	EvalsOnly        *bool           `json:"evals-only"`
	AllEvals         *bool           `json:"all-evals"`
	AppendOnly       *bool           `json:"append-only"`
	EvalMinPrefillEP *int            `json:"eval-min-prefill-ep"`
	ScenarioType     []string        `json:"scenario-type"`
}

var prInDescription = regexp.MustCompile(`PR:\s*(https?://\S+)`)

// Parse reads a changelog_metadata.json. It fails on a file that is not a
// JSON object; it returns ErrUnusable for one without refs or entries;
// entries of the wrong shape are returned as problems and left out.
func Parse(r io.Reader) (Changelog, []Problem, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return Changelog{}, nil, fmt.Errorf("read: %w", err)
	}
	if len(data) > maxBytes {
		return Changelog{}, nil, fmt.Errorf("changelog file is larger than %d bytes", maxBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Changelog{}, nil, fmt.Errorf("empty file")
	}
	if err := strictjson.Check(data); err != nil {
		return Changelog{}, nil, err
	}
	var f rawFile
	if err := json.Unmarshal(data, &f); err != nil {
		return Changelog{}, nil, fmt.Errorf("not a changelog object: %v", err)
	}
	c := Changelog{BaseRef: clean(ptr.Deref(f.BaseRef)), HeadRef: clean(ptr.Deref(f.HeadRef))}
	if c.BaseRef == "" || c.HeadRef == "" {
		return Changelog{}, nil, ErrUnusable{Reason: "changelog has no base_ref/head_ref"}
	}
	if len(f.Entries) > MaxEntries {
		return Changelog{}, nil, fmt.Errorf("changelog has %d entries, more than the %d allowed", len(f.Entries), MaxEntries)
	}
	var problems []Problem
	for i, raw := range f.Entries {
		e, err := parseEntry(raw)
		if err != nil {
			problems = append(problems, Problem{Index: i, Reason: fmt.Sprintf("entry %d: %v", i, err)})
			continue
		}
		c.Entries = append(c.Entries, e)
	}
	if len(c.Entries) == 0 {
		return Changelog{}, problems, ErrUnusable{Reason: "changelog has no entries"}
	}
	return c, problems, nil
}

func parseEntry(raw json.RawMessage) (Entry, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return Entry{}, fmt.Errorf("not an object")
	}
	var r rawEntry
	if err := json.Unmarshal(raw, &r); err != nil {
		return Entry{}, err
	}
	if v := r.EvalMinPrefillEP; v != nil && (*v < 1 || *v > math.MaxInt32) {
		return Entry{}, fmt.Errorf("eval-min-prefill-ep %d is not an integer from 1 to %d", *v, math.MaxInt32)
	}
	e := Entry{ConfigKeys: []string{}, EvalMinPrefillEP: r.EvalMinPrefillEP}
	for _, k := range r.ConfigKeys {
		if k = clean(k); k != "" {
			e.ConfigKeys = append(e.ConfigKeys, k)
		}
	}
	var lines []string
	var one string
	switch {
	case len(r.Description) == 0 || string(r.Description) == "null":
	case json.Unmarshal(r.Description, &lines) == nil:
		one = strings.Join(lines, "\n")
	case json.Unmarshal(r.Description, &one) == nil:
	default:
		return Entry{}, fmt.Errorf("description is neither a string nor a list of strings")
	}
	e.Description = clean(one)
	if len(e.ConfigKeys) == 0 && e.Description == "" {
		return Entry{}, fmt.Errorf("entry has neither config-keys nor a description")
	}
	if r.PRLink != nil && clean(*r.PRLink) != "" {
		v := clean(*r.PRLink)
		e.PRLink = &v
	} else if m := prInDescription.FindStringSubmatch(e.Description); m != nil {
		e.PRLink = &m[1]
	}
	e.EvalsOnly = r.EvalsOnly != nil && *r.EvalsOnly
	e.AllEvals = r.AllEvals != nil && *r.AllEvals
	e.AppendOnly = r.AppendOnly != nil && *r.AppendOnly
	for _, s := range r.ScenarioType {
		if s = clean(s); s != "" {
			e.ScenarioTypes = append(e.ScenarioTypes, s)
		}
	}
	return e, nil
}

// RunInfo is what a fallback entry is described from.
type RunInfo struct {
	RunID      int64
	Name       string
	HeadBranch string
	HeadSHA    string
}

// Fallback is the changelog of a run without one: base "unknown", head the
// branch (else the head sha, else run-<id>), one entry described by the
// workflow name (else "GitHub Actions run <id>").
func Fallback(run RunInfo) Changelog {
	head := clean(run.HeadBranch)
	if head == "" {
		head = clean(run.HeadSHA)
	}
	if head == "" {
		head = fmt.Sprintf("run-%d", run.RunID)
	}
	desc := clean(strings.TrimSpace(run.Name))
	if desc == "" {
		desc = fmt.Sprintf("GitHub Actions run %d", run.RunID)
	}
	return Changelog{BaseRef: "unknown", HeadRef: head, Fallback: true,
		Entries: []Entry{{ConfigKeys: []string{}, Description: desc}}}
}

// clean trims a value and drops NUL characters, which PostgreSQL text
// cannot hold.
func clean(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "\x00", ""))
}
