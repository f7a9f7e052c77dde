package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestDescribeBuild(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	tests := []struct {
		name     string
		version  string
		settings []debug.BuildSetting
		want     string
	}{
		{"tagged release", "v1.2.0", settings("vcs.revision", "0123456789abcdef0123", "vcs.modified", "false"),
			"v1.2.0 (revision 0123456789ab)"},
		{"pseudo-version, dirty tree", "v0.0.0-20261203003832-bd636e2886ae",
			settings("vcs", "git", "vcs.revision", "bd636e2886ae4b5c", "vcs.modified", "true"),
			"v0.0.0-20261203003832-bd636e2886ae (revision bd636e2886ae, modified)"},
		{"go run without a stamp", "(devel)", settings("-compiler", "gc"),
			`(devel) (no VCS revision: built by "go run" or with -buildvcs=false)`},
		{"empty version", "", nil,
			`(devel) (no VCS revision: built by "go run" or with -buildvcs=false)`},
		{"short revision kept whole", "(devel)", settings("vcs.revision", "abc123"),
			"(devel) (revision abc123)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/inferencex/ingest", Version: tc.version}, Settings: tc.settings}
			if got := describeBuild(info); got != tc.want {
				t.Errorf("describeBuild = %q, want %q", got, tc.want)
			}
		})
	}
}

// A version stamped at link time (cmd/ingest's version) replaces the
// module version; the revision part still comes from the build.
func TestToolVersionStamped(t *testing.T) {
	if got := toolVersion("v3.1.4"); got != "v3.1.4" && !strings.HasPrefix(got, "v3.1.4 (revision ") {
		t.Errorf("toolVersion(v3.1.4) = %q, want it to start with the stamped version", got)
	}
	if got := toolVersion(""); strings.HasPrefix(got, "v3.1.4") {
		t.Errorf("toolVersion without a stamp = %q", got)
	}
}
