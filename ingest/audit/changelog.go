package audit

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// CauseNoRun is a changelog entry whose pull request merged in the window
// with no run of the sweep workflow at its merge commit.
const CauseNoRun = "no run"

// Entry is one entry of the producer's changelog (perf-changelog.yaml on
// the default branch): the config keys it changed and its PR link.
type Entry struct {
	ConfigKeys  []string
	Description string
	PRLink      string
}

// ParseChangelog reads the changelog file: a YAML list of entries with
// config-keys, description (a list of lines or one line) and pr-link.
func ParseChangelog(data []byte) ([]Entry, error) {
	var raw []struct {
		ConfigKeys  []string  `yaml:"config-keys"`
		Description yaml.Node `yaml:"description"`
		PRLink      string    `yaml:"pr-link"`
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(raw))
	for _, r := range raw {
		e := Entry{ConfigKeys: r.ConfigKeys, PRLink: strings.TrimSpace(r.PRLink)}
		switch r.Description.Kind {
		case yaml.ScalarNode:
			e.Description = r.Description.Value
		case yaml.SequenceNode:
			var lines []string
			for _, n := range r.Description.Content {
				lines = append(lines, n.Value)
			}
			e.Description = strings.Join(lines, "\n")
		}
		out = append(out, e)
	}
	return out, nil
}

// MergedEntry is a changelog entry whose pull request merged in the window.
type MergedEntry struct {
	Entry
	PR             int
	MergedAt       time.Time
	MergeCommitSHA string
}

// Changelog is the changelog side of an audit.
type Changelog struct {
	Path string `json:"path"`
	// Found is false when the file is absent on the branch.
	Found bool `json:"found"`
	// Entries merged in the window, and how many a run of the window covers.
	Entries int `json:"entries"`
	Covered int `json:"covered"`
}

// AuditChangelog lists each entry (merged in the window) whose merge
// commit is the head sha of no run of the window; entries a run covers are
// audited as that run. res gains the findings, res.Changelog the counts.
func AuditChangelog(res *Result, path string, entries []MergedEntry, runs []Run) {
	heads := map[string]bool{}
	for _, r := range runs {
		if r.HeadSHA != "" {
			heads[r.HeadSHA] = true
		}
	}
	cl := &Changelog{Path: path, Found: true, Entries: len(entries)}
	for _, e := range entries {
		if heads[e.MergeCommitSHA] {
			cl.Covered++
			continue
		}
		res.Missed = append(res.Missed, Finding{CreatedAt: e.MergedAt, PR: e.PR, ConfigKeys: e.ConfigKeys,
			MergeCommitSHA: e.MergeCommitSHA, Cause: CauseNoRun,
			Detail: fmt.Sprintf("no completed run of the sweep workflow has head sha %s", e.MergeCommitSHA)})
	}
	res.Changelog = cl
}
