package github

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/inferencex/ingest/schema"
)

// ReuseMetadata is reused-ingest-metadata/reuse_source_run.json, in the
// reference preparation's format: ids as strings, attempts as numbers, a
// missing PR number or head sha as null.
type ReuseMetadata struct {
	SourceRunID      string  `json:"source_run_id"`
	SourceRunAttempt int     `json:"source_run_attempt"`
	SourceRunURL     string  `json:"source_run_url"`
	SourcePRNumber   *int    `json:"source_pr_number"`
	SourceHeadSHA    *string `json:"source_head_sha"`
	IngestRunID      string  `json:"ingest_run_id"`
	IngestRunAttempt int     `json:"ingest_run_attempt"`
	IngestRunURL     string  `json:"ingest_run_url"`
}

func (c *Client) reuseMetadata(res *Result) ReuseMetadata {
	src, merge := res.Source.Meta, res.Merge.Meta
	m := ReuseMetadata{
		SourceRunID:      strconv.FormatInt(src.RunID, 10),
		SourceRunAttempt: max(src.RunAttempt, 1),
		SourceRunURL:     src.HTMLURL,
		IngestRunID:      strconv.FormatInt(merge.RunID, 10),
		IngestRunAttempt: max(merge.RunAttempt, 1),
		IngestRunURL:     merge.HTMLURL,
	}
	if m.SourceRunURL == "" {
		m.SourceRunURL = schema.RunURL(c.fullRepo(), src.RunID)
	}
	if m.IngestRunURL == "" {
		m.IngestRunURL = schema.RunURL(c.fullRepo(), merge.RunID)
	}
	if len(res.Source.PullRequests) > 0 {
		n := res.Source.PullRequests[0]
		m.SourcePRNumber = &n
	}
	if src.HeadSHA != "" {
		s := src.HeadSHA
		m.SourceHeadSHA = &s
	}
	return m
}

// writeReuseMetadata writes reuse_source_run.json (2-space JSON and a
// newline) into dir, atomically.
func writeReuseMetadata(dir string, m *ReuseMetadata) error {
	return writeJSONFile(dir, ReuseFile, m)
}

func writeJSONFile(dir, name string, v any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
