package fakegithub

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/inferencex/ingest/ingest/source"
)

// zipTime is the modification time of every entry of a zip built from a
// folder, so the bytes (and digests) are the same on every build.
var zipTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// LoadTree registers the run described by a run tree on disk: the run
// from its artifacts.json (or a bare run with id runID when it has none)
// and one artifact per root entry — a folder zipped in memory with its
// files at the zip root (as upload-artifact does), a .zip served as is.
// Ids, upload times and expiry come from the listing; unlisted artifacts
// get fresh ids. runID 0 takes the listing's run id. It returns the run.
func (s *Server) LoadTree(dir string, runID int64) (Run, error) {
	tree, err := source.Open(context.Background(), dir, nil)
	if err != nil {
		return Run{}, err
	}
	defer tree.Close()
	m := tree.Run
	if runID == 0 {
		runID = m.RunID
	}
	if runID == 0 {
		return Run{}, fmt.Errorf("tree %s: no run id", dir)
	}
	run := Run{ID: runID, Attempt: max(m.RunAttempt, 1), Name: m.Name, Event: m.Event, Status: m.Status,
		Conclusion: m.Conclusion, HeadSHA: m.HeadSHA, HeadBranch: m.HeadBranch, CreatedAt: m.CreatedAt,
		RunStartedAt: m.RunStartedAt}
	s.AddRun(run)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Run{}, err
	}
	byName := map[string]int{}
	for i, e := range tree.Listing {
		byName[e.Name] = i
	}
	nextID := runID*1000 + 1
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == source.ListingFile || name == source.ManifestFile {
			continue
		}
		var data []byte
		switch {
		case e.IsDir():
			if data, err = zipFolder(filepath.Join(dir, name)); err != nil {
				return Run{}, fmt.Errorf("artifact %s: %w", name, err)
			}
		case strings.HasSuffix(name, ".zip"):
			if data, err = os.ReadFile(filepath.Join(dir, name)); err != nil {
				return Run{}, err
			}
			name = strings.TrimSuffix(name, ".zip")
		default:
			continue
		}
		a := Artifact{RunID: runID, Name: name, Data: data, CreatedAt: run.CreatedAt}
		if i, ok := byName[name]; ok {
			l := tree.Listing[i]
			a.ID, a.CreatedAt, a.Expired = l.ID, l.CreatedAt, l.Expired
		}
		if a.ID == 0 {
			a.ID = nextID
			nextID++
		}
		s.AddArtifact(a)
	}
	return run, nil
}

// zipFolder zips a folder's files (deflate, sorted, fixed times) with
// paths relative to the folder.
func zipFolder(dir string) ([]byte, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range files {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return nil, err
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: filepath.ToSlash(rel), Method: zip.Deflate, Modified: zipTime})
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ZipFiles builds an artifact zip from name → content, for tests that
// make artifacts up.
func ZipFiles(files map[string]string) []byte {
	names := slices.Sorted(maps.Keys(files))
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Deflate, Modified: zipTime})
		w.Write([]byte(files[n]))
	}
	zw.Close()
	return buf.Bytes()
}
