package source

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/inferencex/ingest/schema"
)

// Tree is the artifacts of one run, as found in a local directory.
type Tree struct {
	// Root is the absolute path of the directory.
	Root string
	// Artifacts are sorted by Name.
	Artifacts []*Artifact
	// HasListing is true when artifacts.json (or, without it,
	// ingest-artifact-manifest.json) was found and parsed.
	HasListing bool
	// ListingName is the listing file read (ListingFile or ManifestFile),
	// "" when the tree has none.
	ListingName string
	// ListingErr is set when the tree has a listing that cannot be used:
	// not a regular file (a link, a folder, a pipe), not the JSON of a
	// listing, or not valid. It reads "artifacts.json: <reason>". Such a
	// tree must not be ingested: without its listing no zip's digest would
	// be checked and retries would be ordered by guesswork.
	ListingErr error
	// Listing holds every entry of the listing, in file order.
	Listing []schema.ArtifactListing
	// Run is the listing's optional "run" object, completed from the
	// artifacts' workflow_run.
	Run schema.RunMeta
	// Problems are tree-level: stray files, rejected names and name
	// collisions. Sorted.
	Problems []Problem
	// HasReceipt is true when the tree holds a measurement receipt
	// (ReceiptFile, a regular file at its top): not an artifact, read by
	// OpenReceipt.
	HasReceipt bool
}

// ReceiptFile is a measurement receipt at the top of a tree.
const ReceiptFile = "receipt.json"

// OpenReceipt opens the tree's measurement receipt; it refuses anything
// but a regular file.
func (t *Tree) OpenReceipt() (*os.File, error) {
	p := filepath.Join(t.Root, ReceiptFile)
	link, err := os.Lstat(p)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if !link.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	info, err := f.Stat()
	if err == nil && !os.SameFile(link, info) {
		err = errors.New("replaced while it was opened")
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Open reads the tree at dir: it names the artifacts at its root and parses
// the listing. It does not read the artifacts themselves: each is indexed
// on first use (Artifact.Load, which FS calls), so opening a tree of
// thousands of artifacts costs one directory read, and a stage reads only
// the artifacts it needs. It fails only when dir itself is unusable or ctx
// ends; anything wrong inside the tree is a Problem, an Artifact.Err or,
// for the listing, ListingErr.
func Open(ctx context.Context, dir string, log *zap.Logger) (*Tree, error) {
	if log == nil {
		log = zap.NewNop()
	}
	log = log.Named("source")
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("source %s: %w", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", dir, err)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", dir, err)
	}
	t := &Tree{Root: abs}
	found := t.scanRoot(entries)
	t.loadListing(found.listingFile)

	// Index the listing by name once: matching each artifact against the
	// whole listing would cost artifacts × entries on a full sweep.
	byName := make(map[string][]schema.ArtifactListing, len(t.Listing))
	for _, e := range t.Listing {
		byName[e.Name] = append(byName[e.Name], e)
	}
	root := openRootFolder(abs)
	dirents := new(direntBufs)
	for _, a := range found.artifacts {
		a.root, a.dirents = root, dirents
		a.candidates = byName[a.Name]
		a.Listing = matchListing(a.Name, "", a.candidates)
		t.Artifacts = append(t.Artifacts, a)
	}
	sortProblems(t.Problems)
	log.Debug("tree",
		zap.String("root", abs),
		zap.Int("artifacts", len(t.Artifacts)),
		zap.Bool("listing", t.HasListing),
		zap.Int("problems", len(t.Problems)))
	return t, nil
}

// rootScan is what the tree root holds.
type rootScan struct {
	artifacts   []*Artifact // sorted by Name, not yet loaded
	listingFile string      // "" when there is none
}

// scanRoot classifies the root entries: folders and *.zip files are
// artifacts, artifacts.json and ingest-artifact-manifest.json the listing,
// anything else a tree Problem. A name present as folder and zip is used
// as the folder.
func (t *Tree) scanRoot(entries []os.DirEntry) rootScan {
	var (
		scan    rootScan
		dirs    = make(map[string]bool)
		zips    = make(map[string]bool)
		listing = make(map[string]bool)
		broken  = make(map[string]string) // listing name → why it is no regular file
	)
	names := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		typ := e.Type()
		switch {
		case name == NamesFile && typ.IsRegular():
			var err error
			if names, err = readNames(filepath.Join(t.Root, name)); err != nil {
				t.problem("", NamesFile, err.Error())
				names = map[string]string{}
			}
		case strings.HasPrefix(name, "."):
			// Hidden entries (.DS_Store, .git) are never artifacts: GitHub
			// artifact names cannot start with a dot.
			continue
		case name == ListingFile || name == ManifestFile:
			if typ.IsRegular() {
				listing[name] = true
			} else {
				broken[name] = notRegularListing(typ)
			}
		case name == ReceiptFile && typ.IsRegular():
			t.HasReceipt = true
		case typ&fs.ModeSymlink != 0:
			t.problem(name, "", "symbolic link rejected")
		case typ.IsDir():
			if validArtifactName(name) {
				dirs[name] = true
			} else {
				t.problem(name, "", "invalid artifact name: must match ^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
			}
		case typ.IsRegular() && strings.HasSuffix(name, ".zip"):
			if stem := strings.TrimSuffix(name, ".zip"); validArtifactName(stem) {
				zips[stem] = true
			} else {
				t.problem(name, "", "invalid artifact name: must match ^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
			}
		default:
			t.problem(name, "", "not an artifact: neither a folder nor a .zip")
		}
	}
	for stem := range zips {
		name := stem
		if real, ok := names[stem]; ok {
			name = real
			if !validArtifactName(name) {
				t.problem(name, "", "invalid artifact name: must match ^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
				continue
			}
		}
		if dirs[name] || name != stem && zips[name] {
			t.problem(name, stem+".zip", "name collision: both a folder and a .zip; the folder is used")
			continue
		}
		scan.artifacts = append(scan.artifacts, &Artifact{Name: name, Container: ContainerZip, Path: filepath.Join(t.Root, stem+".zip")})
	}
	for name := range dirs {
		scan.artifacts = append(scan.artifacts, &Artifact{Name: name, Container: ContainerDir, Path: filepath.Join(t.Root, name)})
	}
	slices.SortFunc(scan.artifacts, func(a, b *Artifact) int { return cmp.Compare(a.Name, b.Name) })
	// artifacts.json wins over the manifest, even when it is unusable: a
	// broken artifacts.json must not let an older manifest stand in.
	for _, name := range []string{ListingFile, ManifestFile} {
		if reason, ok := broken[name]; ok {
			t.ListingName = name
			t.ListingErr = fmt.Errorf("%s: %s", name, reason)
			return scan
		}
		if listing[name] {
			scan.listingFile = name
			if _, ok := broken[ManifestFile]; ok {
				t.problem("", ManifestFile, "listing is not a regular file") // unused, but odd
			}
			return scan
		}
	}
	return scan
}

// loadListing parses the listing file, if any; a listing that cannot be
// read, parsed or validated sets ListingErr and leaves the tree without a
// listing.
func (t *Tree) loadListing(name string) {
	if name == "" {
		return
	}
	t.ListingName = name
	doc, err := readListing(filepath.Join(t.Root, name), name)
	if err != nil {
		t.ListingErr = fmt.Errorf("%s: %w", name, unwrapPathError(err))
		return
	}
	t.HasListing = true
	t.Listing = doc.entries
	t.Run = doc.run
}

func (t *Tree) problem(artifact, file, reason string) {
	t.Problems = append(t.Problems, Problem{Artifact: displayName(artifact), File: displayName(file), Reason: reason})
}

// LoadAll loads every artifact with a few workers, for callers that want
// the whole tree indexed up front.
func (t *Tree) LoadAll(ctx context.Context) error {
	workers := min(runtime.GOMAXPROCS(0)*2, 8, max(len(t.Artifacts), 1))
	next := make(chan *Artifact)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for a := range next {
				_ = a.Load()
			}
		})
	}
	var cancelled error
	for _, a := range t.Artifacts {
		if err := ctx.Err(); err != nil {
			cancelled = err
			break
		}
		next <- a
	}
	close(next)
	wg.Wait()
	if cancelled != nil {
		return fmt.Errorf("source %s: %w", t.Root, cancelled)
	}
	return nil
}

// Artifact returns the artifact called name, or nil.
func (t *Tree) Artifact(name string) *Artifact {
	i, ok := slices.BinarySearchFunc(t.Artifacts, name, func(a *Artifact, n string) int { return cmp.Compare(a.Name, n) })
	if !ok {
		return nil
	}
	return t.Artifacts[i]
}

// Close releases every artifact.
func (t *Tree) Close() error {
	var errs []error
	for _, a := range t.Artifacts {
		errs = append(errs, a.Release())
	}
	return errors.Join(errs...)
}

func sortProblems(ps []Problem) {
	slices.SortFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Artifact, b.Artifact), cmp.Compare(a.File, b.File), cmp.Compare(a.Reason, b.Reason))
	})
}
