package source

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/inferencex/ingest/schema"
)

// zipFlagEncrypted is bit 0 of a zip entry's general purpose flags;
// archive/zip cannot decrypt such entries.
const zipFlagEncrypted = 0x1

// zipIndex is the validated content of one zip: the entries it may serve
// and the entries it refused.
type zipIndex struct {
	files    map[string]*zip.File
	names    []string // sorted keys of files
	problems []Problem
}

// indexZip validates every entry of r before anything is served. Refused:
// hostile names (see entryNameProblem), symbolic links, other non-regular
// files, encrypted entries, names held by several entries, and files whose name is also a
// directory. Directory entries only serve as parents; what is served is
// the regular files and the directories leading to them.
func indexZip(artifact string, r *zip.Reader) zipIndex {
	var (
		problems []Problem
		counts   = make(map[string]int)
		dirs     = make(map[string]bool)
		regular  = make(map[string]*zip.File)
	)
	reject := func(raw, reason string) {
		problems = append(problems, Problem{Artifact: artifact, File: displayName(raw), Reason: reason})
	}
	for _, f := range r.File {
		raw := f.Name
		mode := f.Mode()
		isDir := strings.HasSuffix(raw, "/") || mode.IsDir()
		name := raw
		if isDir && raw != "/" {
			name = strings.TrimSuffix(raw, "/")
		}
		if reason := entryNameProblem(name); reason != "" {
			reject(raw, reason)
			continue
		}
		switch {
		case mode&fs.ModeSymlink != 0:
			reject(raw, "symbolic link rejected")
		case isDir:
			dirs[name] = true
		case !mode.IsRegular():
			reject(raw, notRegular(mode))
		case f.Flags&zipFlagEncrypted != 0:
			reject(raw, "encrypted entry rejected")
		default:
			counts[name]++
			regular[name] = f
		}
	}
	for name := range regular {
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	idx := zipIndex{files: make(map[string]*zip.File, len(regular))}
	for name, f := range regular {
		switch {
		case counts[name] > 1:
			reject(name, fmt.Sprintf("duplicate entry name (%d entries): none served", counts[name]))
		case dirs[name]:
			reject(name, "file has the name of a directory: not served")
		default:
			idx.files[name] = f
			idx.names = append(idx.names, name)
		}
	}
	slices.Sort(idx.names)
	sortProblems(problems)
	idx.problems = problems
	return idx
}

// loadZip fills a zip artifact: it streams the file once for its digest,
// matches the listing, and validates the central directory. With keepOpen
// the zip is returned open for FS; otherwise it is closed.
func loadZip(a *Artifact, listing []schema.ArtifactListing, keepOpen bool) (opened *openedArtifact) {
	f, err := os.Open(a.Path)
	if err != nil {
		a.Err = fmt.Errorf("artifact %s: open zip: %w", a.Name, err)
		return nil
	}
	defer func() {
		if opened == nil {
			f.Close()
		}
	}()
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		a.Err = fmt.Errorf("artifact %s: read zip: %w", a.Name, err)
		return nil
	}
	a.Size = size
	sum := h.Sum(nil)
	a.Digest = "sha256:" + hex.EncodeToString(sum)
	a.zipRead(size, sum)
	a.Listing = matchListing(a.Name, a.Digest, listing)
	if a.Listing != nil && isSHA256Digest(a.Listing.Digest) && !strings.EqualFold(a.Listing.Digest, a.Digest) {
		a.Err = fmt.Errorf("artifact %s: digest mismatch: listing says %s, zip is %s", a.Name, a.Listing.Digest, a.Digest)
		return nil
	}
	r, err := newZipReader(f, size)
	if err != nil {
		a.Err = fmt.Errorf("artifact %s: unreadable zip (truncated or corrupt): %w", a.Name, err)
		return nil
	}
	idx := indexZip(a.Name, r)
	a.Files, a.Problems = idx.names, idx.problems
	if !keepOpen {
		return nil
	}
	return &openedArtifact{backend: zipBackend{files: idx.files}, closer: f}
}

// newZipReader reads the central directory. archive/zip may report
// ErrInsecurePath (GODEBUG zipinsecurepath=0) with a usable reader; names
// are validated by indexZip either way.
func newZipReader(r io.ReaderAt, size int64) (*zip.Reader, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, err
	}
	return zr, nil
}

// openZipFS reopens a zip artifact for serving. The zip must still hold
// exactly the files indexed by loadZip.
func openZipFS(a *Artifact) (fs.FS, io.Closer, error) {
	f, err := os.Open(a.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("artifact %s: open zip: %w", a.Name, err)
	}
	fsys, err := zipFS(a, f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return fsys, f, nil
}

func zipFS(a *Artifact, f *os.File) (fs.FS, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("artifact %s: stat zip: %w", a.Name, err)
	}
	if info.Size() != a.Size {
		return nil, fmt.Errorf("artifact %s: zip changed since it was opened (%d bytes, was %d)", a.Name, info.Size(), a.Size)
	}
	r, err := newZipReader(f, info.Size())
	if err != nil {
		return nil, fmt.Errorf("artifact %s: unreadable zip (truncated or corrupt): %w", a.Name, err)
	}
	idx := indexZip(a.Name, r)
	if !slices.Equal(idx.names, a.Files) {
		return nil, fmt.Errorf("artifact %s: zip changed since it was opened (entries differ)", a.Name)
	}
	return newServedFS(a.Files, zipBackend{files: idx.files}), nil
}

// zipBackend serves validated zip entries. Reads stream decompressed data,
// so a truncated or CRC-corrupted entry surfaces as a read error.
type zipBackend struct {
	files map[string]*zip.File
}

func (b zipBackend) openFile(name string) (fs.File, error) {
	zf, ok := b.files[name]
	if !ok {
		return nil, fs.ErrNotExist
	}
	rc, err := zf.Open()
	if err != nil {
		return nil, err
	}
	return &zipFile{name: name, info: newZipFileInfo(zf), rc: rc}, nil
}

func (b zipBackend) statFile(name string) (fs.FileInfo, error) {
	zf, ok := b.files[name]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return newZipFileInfo(zf), nil
}

func (b zipBackend) statDir(name string) (fs.FileInfo, error) {
	return dirInfo{name: path.Base(name)}, nil
}

// zipFile is an open regular file of a zip artifact.
type zipFile struct {
	name string
	info fs.FileInfo
	rc   io.ReadCloser
}

func (f *zipFile) Stat() (fs.FileInfo, error) { return f.info, nil }

func (f *zipFile) Read(p []byte) (int, error) {
	n, err := f.rc.Read(p)
	if err != nil && err != io.EOF {
		err = &fs.PathError{Op: "read", Path: f.name, Err: err}
	}
	return n, err
}

func (f *zipFile) Close() error { return f.rc.Close() }

// zipFileInfo describes a regular zip entry.
type zipFileInfo struct {
	name    string
	size    int64
	mode    fs.FileMode
	modTime time.Time
}

func newZipFileInfo(zf *zip.File) zipFileInfo {
	perm := zf.Mode().Perm()
	if perm == 0 {
		perm = 0o444
	}
	size := int64(zf.UncompressedSize64)
	if size < 0 {
		size = 0
	}
	return zipFileInfo{name: path.Base(zf.Name), size: size, mode: perm, modTime: zf.Modified}
}

func (i zipFileInfo) Name() string       { return i.name }
func (i zipFileInfo) Size() int64        { return i.size }
func (i zipFileInfo) Mode() fs.FileMode  { return i.mode }
func (i zipFileInfo) ModTime() time.Time { return i.modTime }
func (i zipFileInfo) IsDir() bool        { return false }
func (i zipFileInfo) Sys() any           { return nil }
