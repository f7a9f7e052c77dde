// Package buildid identifies the running binary, for the digest of an
// ingest's inputs (ingest.Deps.Build).
package buildid

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"os"
)

// Read identifies the running binary for the digest of an ingest's
// inputs (ingest.Deps.Build): the Go build ID the linker writes into an
// ELF executable's .note.go.buildid note, near the start of the file (a
// hash of everything the binary was built from, including the embedded
// catalog, overrides and migrations). Where there is no such note, the
// sha256 of the whole executable.
func Read() ([]byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(exe)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	if id := goBuildIDNote(head[:n]); id != nil {
		return append([]byte("go-build-id:"), id...), nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return append([]byte("sha256:"), h.Sum(nil)...), nil
}

// goBuildIDNote finds the Go build ID note in the first bytes of an ELF
// file: namesz 4, descsz, type 4 (little-endian words), the name "Go\0\0",
// then descsz bytes of ID.
func goBuildIDNote(b []byte) []byte {
	tag := []byte("\x04\x00\x00\x00Go\x00\x00")
	for off := 0; ; {
		i := bytes.Index(b[off:], tag)
		if i < 0 {
			return nil
		}
		i += off
		off = i + 1
		if i < 8 || binary.LittleEndian.Uint32(b[i-8:]) != 4 {
			continue
		}
		size := int(binary.LittleEndian.Uint32(b[i-4:]))
		start := i + len(tag)
		if size < 16 || size > 1024 || start+size > len(b) || !bytes.Contains(b[start:start+size], []byte("/")) {
			continue
		}
		return b[start : start+size]
	}
}
