//go:build !linux

package source

import "context"

// walkTree lists dir (rel below the root) depth first, in name order.
func walkTree(dir, rel string, withTimes bool, out *[]digestEntry) error {
	return walkTreePortable(dir, rel, withTimes, out)
}

// hashFiles fills in the sha256 of every regular file, a few files at a
// time: from known when it records the file with the metadata the walk
// read, else by reading it.
func hashFiles(ctx context.Context, root string, entries []digestEntry, known FileIndex) error {
	return hashFilesPortable(ctx, root, entries, known)
}
