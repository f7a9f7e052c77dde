// Package receipt reads a measurement receipt (receipt.json at the top of
// a run tree): the producer's list of the artifacts and files (members)
// behind each published point, with their sha256 and size, and the
// execution record of every point. The ingest recognises and verifies a
// receipt; it does not require one.
package receipt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/inferencex/ingest/ingest/strictjson"
)

// File is the receipt's name at the top of a run tree.
const File = "receipt.json"

// Kind and Version are the receipt format read.
const (
	Kind    = "source-measurement-receipt"
	Version = 1
)

// ExecutionFile is the name of a point's execution record inside an
// artifact: evidence of how the point ran, never a row.
const ExecutionFile = "execution.json"

// Receipt is what the ingest uses of a receipt.
type Receipt struct {
	ID          string     `json:"receipt_id"`
	SourceRunID string     `json:"source_run_id"`
	Points      []Point    `json:"points"`
	Artifacts   []Artifact `json:"artifacts"`
}

// Point is one published point and where its evidence is.
type Point struct {
	PointID             string `json:"point_id"`
	ExecutionArtifactID int64  `json:"execution_artifact_id"`
	ExecutionPath       string `json:"execution_path"`
}

// Artifact is one artifact of the receipt and every file it holds.
type Artifact struct {
	ID      int64    `json:"id"`
	Name    string   `json:"name"`
	Members []Member `json:"members"`
}

// Member is one file of an artifact: its path inside the artifact, sha256
// (hex) and size.
type Member struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

var (
	hex64        = regexp.MustCompile(`^[a-f0-9]{64}$`)
	artifactName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// Parse reads and checks a receipt: standard JSON, its kind and version,
// receipt_id equal to the sha256 of its canonical content (every other
// field, keys sorted, integers only), unique artifact ids and names, and
// members with safe relative paths, hex sha256 and non-negative sizes.
func Parse(data []byte) (*Receipt, error) {
	if !json.Valid(data) {
		var v any
		return nil, fmt.Errorf("not JSON: %v", json.Unmarshal(data, &v))
	}
	if err := strictjson.Check(data); err != nil {
		return nil, err
	}
	var head struct {
		Kind    string `json:"kind"`
		Version any    `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a receipt object: %v", err)
	}
	if head.Kind != Kind || head.Version != float64(Version) {
		return nil, fmt.Errorf("unsupported receipt kind %q version %v (this ingest reads %s version %d)", head.Kind, head.Version, Kind, Version)
	}
	var r Receipt
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("not a receipt: %v", err)
	}
	if err := checkID(data, r.ID); err != nil {
		return nil, err
	}
	ids, names := map[int64]bool{}, map[string]bool{}
	for i, a := range r.Artifacts {
		if a.ID <= 0 || ids[a.ID] || !artifactName.MatchString(a.Name) || a.Name == "." || a.Name == ".." || names[a.Name] {
			return nil, fmt.Errorf("artifact %d: invalid or duplicate id or name", i)
		}
		ids[a.ID], names[a.Name] = true, true
		paths := map[string]bool{}
		for j, m := range a.Members {
			if !SafePath(m.Path) || paths[m.Path] || !hex64.MatchString(m.SHA256) || m.Size < 0 {
				return nil, fmt.Errorf("artifact %s: member %d: invalid or duplicate path, sha256 or size", a.Name, j)
			}
			paths[m.Path] = true
		}
	}
	for i, p := range r.Points {
		if !ids[p.ExecutionArtifactID] || !SafePath(p.ExecutionPath) {
			return nil, fmt.Errorf("point %d: execution record names no artifact of the receipt", i)
		}
	}
	return &r, nil
}

// checkID compares receipt_id with the sha256 of the canonical JSON of the
// receipt without it.
func checkID(data []byte, id string) error {
	if !hex64.MatchString(id) {
		return errors.New("receipt_id is not a hex sha256")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("not a receipt object: %v", err)
	}
	delete(doc, "receipt_id")
	var b bytes.Buffer
	if err := canonical(&b, doc); err != nil {
		return err
	}
	sum := sha256.Sum256(b.Bytes())
	if got := hex.EncodeToString(sum[:]); got != id {
		return fmt.Errorf("receipt_id %s does not match its content (sha256 %s)", id, got)
	}
	return nil
}

// canonical writes v with object keys sorted, no whitespace, strings as
// JSON.stringify writes them and numbers as integers (a receipt holds no
// other numbers).
func canonical(b *bytes.Buffer, v any) error {
	switch t := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(t))
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			if err := canonical(b, t[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := canonical(b, x); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case json.Number:
		n, err := t.Int64()
		if err != nil || n > 1<<53-1 || n < -(1<<53-1) {
			f, ferr := t.Float64()
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53-1 {
				return fmt.Errorf("receipt number %s is not a safe integer", t)
			}
			n = int64(f)
		}
		fmt.Fprintf(b, "%d", n)
	case string:
		writeString(b, t)
	case bool:
		fmt.Fprintf(b, "%t", t)
	case nil:
		b.WriteString("null")
	}
	return nil
}

// writeString writes s as JSON.stringify does: only '"', '\\' and control
// characters are escaped.
func writeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// SafePath reports whether p is a relative slash path without empty, "."
// or ".." segments, backslashes, NULs or a drive letter.
func SafePath(p string) bool {
	if p == "" || strings.ContainsAny(p, "\\\x00") || strings.HasPrefix(p, "/") ||
		(len(p) >= 2 && p[1] == ':' && (p[0]|0x20) >= 'a' && (p[0]|0x20) <= 'z') {
		return false
	}
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." || s == ".." {
			return false
		}
	}
	return true
}

// ExecutionPaths are the execution records the receipt names, by artifact
// name.
func (r *Receipt) ExecutionPaths() map[string]map[string]bool {
	byID := map[int64]string{}
	for _, a := range r.Artifacts {
		byID[a.ID] = a.Name
	}
	out := map[string]map[string]bool{}
	for _, p := range r.Points {
		name := byID[p.ExecutionArtifactID]
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		out[name][p.ExecutionPath] = true
	}
	return out
}

// IsExecutionRecord reports whether the file at path of an artifact is an
// execution record: named execution.json, or named so by the receipt.
func IsExecutionRecord(path string, named map[string]bool) bool {
	base := path[strings.LastIndexByte(path, '/')+1:]
	return base == ExecutionFile || named[path]
}
