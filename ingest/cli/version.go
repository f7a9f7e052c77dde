package cli

import (
	"runtime/debug"
	"strings"
)

// toolVersion is what `ingest version` prints and what the ledger records
// for every ingest: the release version stamped at link time (stamped; the
// module version when empty) and the VCS revision the binary was built
// from, read from the build information the Go toolchain stamps.
func toolVersion(stamped string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		if stamped != "" {
			return stamped
		}
		return "unknown (no build information)"
	}
	if stamped == "" {
		return describeBuild(info)
	}
	info.Main.Version = stamped
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			return describeBuild(info)
		}
	}
	// A release build (GoReleaser builds without VCS stamping): the tag
	// names the build.
	return stamped
}

// describeBuild renders the module version and VCS stamp of a build:
//
//	v1.2.0 (revision 0123456789ab)
//	v0.0.0-20261203003832-bd636e2886ae (revision bd636e2886ae, modified)
//	(devel) (no VCS revision: built by "go run" or with -buildvcs=false)
func describeBuild(info *debug.BuildInfo) string {
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision == "" {
		return version + ` (no VCS revision: built by "go run" or with -buildvcs=false)`
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	var b strings.Builder
	b.WriteString(version)
	b.WriteString(" (revision ")
	b.WriteString(revision)
	if modified == "true" {
		b.WriteString(", modified")
	}
	b.WriteString(")")
	return b.String()
}
