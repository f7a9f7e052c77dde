package source

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/inferencex/ingest/schema"
)

// WriteListing writes path (normally <tree>/artifacts.json) in the format
// Open reads: the GitHub REST response shape {"total_count", "artifacts"}
// plus a "run" object when anything about the run is known. The file is
// replaced atomically.
func WriteListing(path string, run schema.RunMeta, listing []schema.ArtifactListing) error {
	page := wirePage{TotalCount: len(listing), Artifacts: make([]wireArtifact, 0, len(listing))}
	for _, e := range listing {
		w := wireArtifact{
			ID:          e.ID,
			Name:        e.Name,
			CreatedAt:   formatTime(e.CreatedAt),
			SizeInBytes: e.SizeInBytes,
			Expired:     e.Expired,
		}
		if e.Digest != "" {
			w.Digest = &e.Digest
		}
		page.Artifacts = append(page.Artifacts, w)
	}
	if run != (schema.RunMeta{}) {
		page.Run = &wireRun{
			ID:           run.RunID,
			RunAttempt:   run.RunAttempt,
			Name:         run.Name,
			Event:        run.Event,
			Status:       run.Status,
			Conclusion:   run.Conclusion,
			HeadSHA:      run.HeadSHA,
			HeadBranch:   run.HeadBranch,
			HTMLURL:      run.HTMLURL,
			CreatedAt:    formatTime(run.CreatedAt),
			RunStartedAt: formatTime(run.RunStartedAt),
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(page); err != nil {
		return fmt.Errorf("listing %s: encode: %w", path, err)
	}
	if err := writeFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("listing %s: %w", path, err)
	}
	return nil
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it over path, so a reader never sees a partial listing.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(name, 0o644)
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return err
	}
	return nil
}
