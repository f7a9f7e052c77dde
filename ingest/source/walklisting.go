package source

import (
	"strings"
	"sync"
)

// walkListing is the digest walk's view of the folders at the tree's root:
// a folder artifact of a watched tree (Digesting.Watch) takes its files
// and their sizes from it instead of listing the folder again, which on a
// run of thousands of one-file folders was a directory read and a stat per
// folder more. It is complete once done is closed, and its folders are
// indexed on first use (an ingest answered from the ledger reads no
// folder); there are none when the walk failed. A folder holding anything
// the listing would reject or look at twice (a link, a special file, a
// name with a problem) is left out: its artifact lists itself, with the
// listing's own words.
type walkListing struct {
	done    chan struct{}
	index   sync.Once
	entries []digestEntry           // the walk's, until indexed; their paths and kinds never change
	sizes   []int64                 // the entries' sizes as walked: hashing may update an entry
	folders map[string][]walkedFile // root folder name → its regular files
}

// walkedFile is a regular file of a folder as the walk saw it: its path
// relative to the folder, and its size.
type walkedFile struct {
	name string
	size int64
}

func newWalkListing() *walkListing { return &walkListing{done: make(chan struct{})} }

// set records the walk's entries and completes the listing.
func (l *walkListing) set(entries []digestEntry) {
	l.sizes = make([]int64, len(entries))
	for i := range entries {
		l.sizes[i] = entries[i].stat.size
	}
	l.entries = entries
	close(l.done)
}

// fail completes the listing without folders: every artifact lists itself.
func (l *walkListing) fail() { close(l.done) }

// folder waits for the walk and returns the files of the root folder name;
// ok is false when the folder must list itself.
func (l *walkListing) folder(name string) (files []walkedFile, ok bool) {
	if l == nil {
		return nil, false
	}
	<-l.done
	l.index.Do(l.build)
	files, ok = l.folders[name]
	return files, ok
}

// build indexes the folders of the walk's entries (depth first, so a root
// folder's entries follow it) and lets go of the entries.
func (l *walkListing) build() {
	entries, sizes := l.entries, l.sizes
	l.entries, l.sizes = nil, nil
	if entries == nil {
		return
	}
	folders := make(map[string][]walkedFile)
	files := make([]walkedFile, 0, len(entries))
	for i := 0; i < len(entries); {
		e := &entries[i]
		i++
		if e.kind != 'd' || strings.IndexByte(e.path, '/') >= 0 {
			continue // a root file or link, or the inside of a folder left out
		}
		prefix := e.path + "/"
		start, clean := len(files), true
		for ; i < len(entries) && strings.HasPrefix(entries[i].path, prefix); i++ {
			c := &entries[i]
			rel := c.path[len(prefix):]
			switch {
			case !clean:
			case (c.kind != 'f' && c.kind != 'd') || entryNameProblem(rel) != "":
				clean = false
			case c.kind == 'f':
				// A copy: the artifact keeps its file names for the whole
				// ingest, the walk's paths (its folder's name first) need not.
				files = append(files, walkedFile{name: strings.Clone(rel), size: sizes[i]})
			}
		}
		if clean {
			folders[e.path] = files[start:len(files):len(files)]
		} else {
			files = files[:start]
		}
	}
	l.folders = folders
}
