//go:build !linux

package source

import (
	"io/fs"
)

// fdFolder is the Linux fast path for folders; elsewhere os.Root serves
// them (openFdFolder always reports not ok).
type fdFolder struct{}

func openFdFolder(string, bool) (*fdFolder, bool, error) { return nil, false, nil }

func (*fdFolder) Close() error { return nil }

func (*fdFolder) list(*direntBufs, func(name, reason string), func(name string, size int64)) error {
	return nil
}

func (*fdFolder) openFile(string) (fs.File, error)     { return nil, fs.ErrNotExist }
func (*fdFolder) statFile(string) (fs.FileInfo, error) { return nil, fs.ErrNotExist }
func (*fdFolder) statDir(string) (fs.FileInfo, error)  { return nil, fs.ErrNotExist }

func openRootFolder(string) *fdFolder { return nil }

// openSubFolder is the Linux fast path for walked folders; it is never
// called elsewhere (openRootFolder returns nil).
func openSubFolder(*fdFolder, string) *openedArtifact { return nil }
