//go:build !linux

package source

import (
	"io/fs"
)

// fdFolder is the Linux fast path for folders; elsewhere os.Root serves
// them (openFdFolder always reports not ok).
type fdFolder struct{}

func haveOpenat2(string) bool { return false }

func openFdFolder(string, bool) (*fdFolder, bool, error) { return nil, false, nil }

func (*fdFolder) Close() error { return nil }

func (*fdFolder) list(*direntBufs, func(name, reason string), func(name string, size int64)) error {
	return nil
}

func (*fdFolder) openFile(string) (fs.File, error)     { return nil, fs.ErrNotExist }
func (*fdFolder) statFile(string) (fs.FileInfo, error) { return nil, fs.ErrNotExist }
func (*fdFolder) statDir(string) (fs.FileInfo, error)  { return nil, fs.ErrNotExist }

func openRootFolder(string) *fdFolder { return nil }

// subFolder is the Linux fast path for walked folders; it is never made
// elsewhere (openRootFolder returns nil).
type subFolder struct {
	root *fdFolder
	name string
}

func (subFolder) openFile(string) (fs.File, error)     { return nil, fs.ErrNotExist }
func (subFolder) statFile(string) (fs.FileInfo, error) { return nil, fs.ErrNotExist }
func (subFolder) statDir(string) (fs.FileInfo, error)  { return nil, fs.ErrNotExist }

type noClose struct{}

func (noClose) Close() error { return nil }
