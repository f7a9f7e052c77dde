package archive

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/inferencex/ingest/schema"
)

// Project is the production project's archive: a public bucket that a
// scheduled job copies every workflow run's artifact zips into.
const Project = "gs://inferencemax-gha-backup"

// Archive is an opened artifact archive.
type Archive struct {
	b      bucket
	prefix string // "" or "PREFIX/"
	url    string

	mu sync.Mutex
	// runs is the index of run folders, read once (nil until then).
	runs map[int64]*Run
	// objects are the artifact objects of the runs listed last, by
	// artifact id (ids are unique across GitHub); listed holds those runs'
	// ids, oldest first, so that a backfill of the whole archive keeps only
	// the few runs it is working on.
	objects map[int64]object
	listed  []listedRun
}

// listedRun is one run whose objects are kept.
type listedRun struct {
	id        int64
	artifacts []int64
}

// keptRuns bounds the runs whose object listings are kept: a fetch lists
// its run and downloads it straight after.
const keptRuns = 8

// Run is one run's place in the archive.
type Run struct {
	ID       int64
	Workflow string
	// Date is the first date folder that holds the run.
	Date time.Time
	// Dirs are the run's folders, oldest date first (a run copied on two
	// days has two).
	Dirs []string
}

// ErrS3 is the refusal of an s3:// archive.
var ErrS3 = errors.New("s3:// is not supported: the archive is read through Google Cloud Storage's JSON API with net/http " +
	"(cloud.google.com/go/storage would push the binary past its 60 MB limit), and S3 would need a client of its own; " +
	"mirror the bucket to a directory (aws s3 sync s3://BUCKET DIR) and pass DIR")

// CheckScheme refuses the URLs Open does not read: any scheme but gs://
// and file:// (a plain path is a mirror directory).
func CheckScheme(rawURL string) error {
	scheme, _, ok := strings.Cut(rawURL, "://")
	switch {
	case !ok || scheme == "gs" || scheme == "file":
		return nil
	case strings.EqualFold(scheme, "s3"):
		return ErrS3
	}
	return fmt.Errorf("%s:// is not supported: want gs://BUCKET[/PREFIX] or a local mirror directory", scheme)
}

// Open opens the archive at rawURL: gs://BUCKET[/PREFIX], or a local
// directory (a path, or file://PATH) that mirrors one.
func Open(ctx context.Context, rawURL string, o Options) (*Archive, error) {
	a := &Archive{url: rawURL, objects: map[int64]object{}}
	switch {
	case strings.HasPrefix(rawURL, "gs://"):
		u, err := url.Parse(rawURL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("archive %q: want gs://BUCKET[/PREFIX]", rawURL)
		}
		a.b = openGCS(u.Host, o)
		if p := strings.Trim(u.Path, "/"); p != "" {
			a.prefix = p + "/"
		}
	case strings.Contains(rawURL, "://") && !strings.HasPrefix(rawURL, "file://"):
		return nil, fmt.Errorf("archive %q: %w", rawURL, CheckScheme(rawURL))
	default:
		dir := strings.TrimPrefix(rawURL, "file://")
		info, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("archive %s: %w", rawURL, err)
		}
		if !info.IsDir() {
			return nil, fmt.Errorf("archive %s: not a directory", rawURL)
		}
		if a.b, err = openDir(dir); err != nil {
			return nil, fmt.Errorf("archive %s: %w", rawURL, err)
		}
	}
	return a, nil
}

// String is the archive's URL.
func (a *Archive) String() string { return a.url }

// Close releases the store's client.
func (a *Archive) Close() error { return a.b.close() }

// listings bounds concurrent listing calls.
const listings = 8

// Runs lists every run folder of the archive, oldest date first (runs of
// a date by id). The index is read once per Archive.
func (a *Archive) Runs(ctx context.Context) ([]Run, error) {
	idx, err := a.index(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Run, 0, len(idx))
	for _, r := range idx {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(x, y Run) int {
		if c := x.Date.Compare(y.Date); c != 0 {
			return c
		}
		return int(min(max(x.ID-y.ID, -1), 1))
	})
	return out, nil
}

// Find is the run's place in the archive; false when the archive does not
// hold it.
func (a *Archive) Find(ctx context.Context, id int64) (Run, bool, error) {
	idx, err := a.index(ctx)
	if err != nil {
		return Run{}, false, err
	}
	r, ok := idx[id]
	if !ok {
		return Run{}, false, nil
	}
	return *r, true, nil
}

func (a *Archive) index(ctx context.Context) (map[int64]*Run, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.runs != nil {
		return a.runs, nil
	}
	_, dates, err := a.b.list(ctx, a.prefix, true)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", a.url, err)
	}
	type folder struct {
		date time.Time
		dirs []string
	}
	var folders []folder
	for _, d := range dates {
		day, err := time.Parse(time.DateOnly, lastSegment(d))
		if err != nil || !dateRe.MatchString(lastSegment(d)) {
			continue // not a date folder
		}
		folders = append(folders, folder{date: day, dirs: []string{d}})
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(listings)
	for i := range folders {
		g.Go(func() error {
			_, runs, err := a.b.list(gctx, folders[i].dirs[0], true)
			if err != nil {
				return err
			}
			folders[i].dirs = runs
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("archive %s: %w", a.url, err)
	}
	slices.SortFunc(folders, func(x, y folder) int { return x.date.Compare(y.date) })
	idx := map[int64]*Run{}
	for _, f := range folders {
		for _, d := range f.dirs {
			wf, id, ok := parseRunDir(lastSegment(d))
			if !ok {
				continue
			}
			if r, dup := idx[id]; dup {
				r.Dirs = append(r.Dirs, d)
				continue
			}
			idx[id] = &Run{ID: id, Workflow: wf, Date: f.date, Dirs: []string{d}}
		}
	}
	a.runs = idx
	return idx, nil
}

// metaArtifact is one entry of artifacts_metadata.json: GitHub's artifact
// object as the copier saved it.
type metaArtifact struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	SizeInBytes int64     `json:"size_in_bytes"`
	CreatedAt   time.Time `json:"created_at"`
	Digest      string    `json:"digest"`
	WorkflowRun *struct {
		ID         int64  `json:"id"`
		HeadBranch string `json:"head_branch"`
		HeadSHA    string `json:"head_sha"`
	} `json:"workflow_run"`
}

// maxMetadata bounds artifacts_metadata.json (a run of a few thousand
// artifacts is well under it).
const maxMetadata = 32 << 20

// Contents lists what the archive holds of run id: nil when it holds
// nothing of it.
func (a *Archive) Contents(ctx context.Context, id int64) (*schema.ArchivedRun, error) {
	r, ok, err := a.Find(ctx, id)
	if err != nil || !ok {
		return nil, err
	}
	out := &schema.ArchivedRun{Meta: schema.RunMeta{RunID: id, Name: r.Workflow, CreatedAt: r.Date},
		Where: a.url + "/" + strings.TrimPrefix(r.Dirs[0], a.prefix)}
	objs := map[int64]object{}
	var metaObj []object
	for _, d := range r.Dirs {
		list, _, err := a.b.list(ctx, d+"artifacts/", false)
		if err != nil {
			return nil, fmt.Errorf("archive %s: run %d: %w", a.url, id, err)
		}
		for _, o := range list {
			base := lastSegment(o.Name)
			if base == MetadataFile {
				metaObj = append(metaObj, o)
				continue
			}
			name, aid, ok := parseZip(base)
			if !ok || strings.Contains(strings.TrimPrefix(o.Name, d+"artifacts/"), "/") {
				continue
			}
			objs[aid] = o
			out.Uploads = append(out.Uploads, schema.ArtifactListing{ID: aid, Name: name, SizeInBytes: o.Size})
		}
	}
	byID := map[int64]metaArtifact{}
	for _, mo := range metaObj {
		list, err := a.readMetadata(ctx, mo)
		if err != nil {
			// A damaged listing is no reason to lose the run: its facts are
			// inferred from the names instead.
			continue
		}
		out.HasMetadata = true
		for _, m := range list {
			byID[m.ID] = m
			if w := m.WorkflowRun; w != nil && w.ID == id {
				out.Meta.HeadBranch, out.Meta.HeadSHA = w.HeadBranch, w.HeadSHA
			}
		}
	}
	var earliest time.Time
	for i, u := range out.Uploads {
		m, ok := byID[u.ID]
		if !ok {
			continue
		}
		out.Uploads[i].CreatedAt, out.Uploads[i].Digest = m.CreatedAt, m.Digest
		if !m.CreatedAt.IsZero() && (earliest.IsZero() || m.CreatedAt.Before(earliest)) {
			earliest = m.CreatedAt
		}
	}
	if !earliest.IsZero() {
		out.Meta.CreatedAt = earliest
		out.Inferred = append(out.Inferred, "created_at is the run's first artifact upload")
	} else {
		out.Inferred = append(out.Inferred, "created_at is the archive's date folder "+r.Date.Format(time.DateOnly))
	}
	if out.Meta.HeadSHA == "" {
		out.Inferred = append(out.Inferred, "no head SHA or branch")
	}
	out.Inferred = append(out.Inferred, fmt.Sprintf("workflow name %q from the folder name", r.Workflow))
	slices.SortFunc(out.Uploads, func(x, y schema.ArtifactListing) int { return int(min(max(x.ID-y.ID, -1), 1)) })
	a.keep(id, objs)
	return out, nil
}

// keep records a run's objects for Download, forgetting those of the
// oldest runs beyond keptRuns.
func (a *Archive) keep(runID int64, objs map[int64]object) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]int64, 0, len(objs))
	for k, v := range objs {
		a.objects[k] = v
		ids = append(ids, k)
	}
	a.listed = slices.DeleteFunc(a.listed, func(r listedRun) bool { return r.id == runID })
	a.listed = append(a.listed, listedRun{id: runID, artifacts: ids})
	for len(a.listed) > keptRuns {
		for _, k := range a.listed[0].artifacts {
			delete(a.objects, k)
		}
		a.listed = a.listed[1:]
	}
}

func (a *Archive) readMetadata(ctx context.Context, o object) ([]metaArtifact, error) {
	if o.Size > maxMetadata {
		return nil, fmt.Errorf("%s: %d bytes, over the %d limit", o.Name, o.Size, maxMetadata)
	}
	r, err := a.b.open(ctx, o.Name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var list []metaArtifact
	if err := json.NewDecoder(io.LimitReader(r, maxMetadata)).Decode(&list); err != nil {
		return nil, fmt.Errorf("%s: %w", o.Name, err)
	}
	return list, nil
}

// CorruptError is an object whose bytes do not match what the store says
// of it (size, CRC32C, MD5) or the digest GitHub listed.
type CorruptError struct {
	Object string
	Why    string
}

func (e *CorruptError) Error() string { return fmt.Sprintf("archive object %s: %s", e.Object, e.Why) }

// Corrupt marks the error as one artifact's, not the fetch's.
func (e *CorruptError) Corrupt() bool { return true }

// Download brings artifact art (listed by Contents) to path, verified,
// unless a file of the object's size is there already (the cache: files
// land there only verified, by rename). It returns the bytes and whether
// path was a cache hit.
func (a *Archive) Download(ctx context.Context, art schema.ArtifactListing, path string) (int64, bool, error) {
	a.mu.Lock()
	o, ok := a.objects[art.ID]
	a.mu.Unlock()
	if !ok {
		return 0, false, fmt.Errorf("archive %s: artifact %s (id %d) is not listed", a.url, art.Name, art.ID)
	}
	fi, err := os.Stat(path)
	if err == nil && fi.Mode().IsRegular() && fi.Size() == o.Size {
		return o.Size, true, nil
	}
	if l, ok := a.b.(linker); ok {
		if n, done, err := a.linkInto(ctx, l, o, art, path, !errors.Is(err, fs.ErrNotExist)); done || err != nil {
			return n, false, err
		}
	}
	r, err := a.b.open(ctx, o.Name)
	if err != nil {
		return 0, false, fmt.Errorf("archive %s: %w", a.url, err)
	}
	defer r.Close()
	// Named as the GitHub download's partial files (.ID-pidPID-*.part):
	// the cache's sweep of files left by a process that died removes
	// these too.
	tmp, err := os.CreateTemp(filepath.Dir(path), fmt.Sprintf(".%d-pid%d-*.part", art.ID, os.Getpid()))
	if err != nil {
		return 0, false, fmt.Errorf("cache: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	crc := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	md := md5.New()
	sha := sha256.New()
	// One byte past the size tells a longer object from a whole one.
	n, err := io.Copy(io.MultiWriter(tmp, crc, md, sha), io.LimitReader(r, o.Size+1))
	if err != nil {
		var corrupt interface{ Corrupt() bool }
		if errors.As(err, &corrupt) {
			return n, false, err
		}
		return n, false, fmt.Errorf("archive %s: read %s: %w", a.url, o.Name, err)
	}
	switch {
	case n != o.Size:
		return n, false, &CorruptError{Object: o.Name, Why: fmt.Sprintf("read %d bytes, the store says %d", n, o.Size)}
	case o.HasCRC && crc.Sum32() != o.CRC32C:
		return n, false, &CorruptError{Object: o.Name, Why: fmt.Sprintf("CRC32C %08x, the store says %08x", crc.Sum32(), o.CRC32C)}
	case len(o.MD5) > 0 && !slices.Equal(md.Sum(nil), o.MD5):
		return n, false, &CorruptError{Object: o.Name, Why: fmt.Sprintf("MD5 %x, the store says %x", md.Sum(nil), o.MD5)}
	}
	if algo, want, ok := strings.Cut(art.Digest, ":"); ok && strings.EqualFold(algo, "sha256") {
		if got := hex.EncodeToString(sha.Sum(nil)); !strings.EqualFold(got, want) {
			return n, false, &CorruptError{Object: o.Name, Why: fmt.Sprintf("sha256 %s, GitHub's listing says %s", got, want)}
		}
	}
	if err := tmp.Close(); err != nil {
		return n, false, fmt.Errorf("cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return n, false, fmt.Errorf("cache: %w", err)
	}
	done = true
	return n, false, nil
}

// linkInto places a local mirror's object at path as a hard link, after
// checking its size (and its sha256 against GitHub's listing, when the
// metadata gives one); a file found at path (exists) is replaced. done is
// false when the file system cannot link: the object is then copied.
func (a *Archive) linkInto(ctx context.Context, l linker, o object, art schema.ArtifactListing, path string, exists bool) (int64, bool, error) {
	if algo, want, ok := strings.Cut(art.Digest, ":"); ok && strings.EqualFold(algo, "sha256") {
		r, err := a.b.open(ctx, o.Name)
		if err != nil {
			return 0, false, fmt.Errorf("archive %s: %w", a.url, err)
		}
		sha := sha256.New()
		_, err = io.Copy(sha, io.LimitReader(r, o.Size+1))
		r.Close()
		if err != nil {
			return 0, false, fmt.Errorf("archive %s: read %s: %w", a.url, o.Name, err)
		}
		if got := hex.EncodeToString(sha.Sum(nil)); !strings.EqualFold(got, want) {
			return 0, false, &CorruptError{Object: o.Name, Why: fmt.Sprintf("sha256 %s, GitHub's listing says %s", got, want)}
		}
	}
	if exists {
		os.Remove(path) // a file of another size (a partial copy of an older listing)
	}
	if err := l.link(o.Name, path); err != nil {
		return 0, false, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false, fmt.Errorf("cache: %w", err)
	}
	if fi.Size() != o.Size {
		os.Remove(path)
		return fi.Size(), false, &CorruptError{Object: o.Name, Why: fmt.Sprintf("%d bytes, the listing said %d", fi.Size(), o.Size)}
	}
	return o.Size, true, nil
}
