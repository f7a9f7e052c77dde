package source

import (
	"io/fs"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// validArtifactName reports whether name matches ^[A-Za-z0-9][A-Za-z0-9_.+-]*$.
// GitHub allows more, but names with spaces, control characters or colons
// are refused: they cannot be carried safely into paths and reports.
func validArtifactName(name string) bool {
	if name == "" || !isAlnum(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) && c != '_' && c != '.' && c != '+' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// entryNameProblem checks one path inside an artifact (a zip entry name
// without its directory slash, or a path found in a folder) and returns why
// it is refused, or "" when it is safe to serve. A safe name is a clean,
// relative, slash-separated path (fs.ValidPath) without backslashes,
// control characters or a drive letter.
func entryNameProblem(name string) string {
	switch {
	case name == "":
		return "empty name"
	case strings.IndexByte(name, 0) >= 0:
		return "NUL byte in name"
	case !utf8.ValidString(name):
		return "name is not valid UTF-8"
	case strings.ContainsFunc(name, isControl):
		return "control character in name"
	case strings.IndexByte(name, '\\') >= 0:
		return "backslash in name"
	case name[0] == '/' || hasDriveLetter(name):
		return "absolute path"
	case name == ".":
		return `name is "."`
	}
	for elem := range strings.SplitSeq(name, "/") {
		if elem == ".." {
			return `".." path element`
		}
	}
	if !fs.ValidPath(name) {
		return "non-canonical path (empty or \".\" element)"
	}
	return ""
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// hasDriveLetter reports a Windows volume prefix such as "C:".
func hasDriveLetter(name string) bool {
	return len(name) >= 2 && name[1] == ':' &&
		(name[0] >= 'a' && name[0] <= 'z' || name[0] >= 'A' && name[0] <= 'Z')
}

// displayName returns name as it can be shown in logs and reports: as is
// when it is printable UTF-8, Go-quoted otherwise.
func displayName(name string) string {
	if utf8.ValidString(name) && !strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return name
	}
	return strconv.Quote(name)
}
