//go:build linux

package source

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// statOf reads size, times, inode and device from what lstat returned.
func statOf(info fs.FileInfo) fileStat {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStat{size: info.Size()}
	}
	return fileStat{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
		ino: st.Ino, dev: st.Dev, full: true}
}

// statOfRaw reads size, times, inode and device from what fstatat(2)
// returned, as statOf does from lstat.
func statOfRaw(st *unix.Stat_t) fileStat {
	return fileStat{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
		ino: st.Ino, dev: st.Dev, full: true}
}
