package source

import (
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEntryNameProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want string
	}{
		{"agg_bmk.json", ""},
		{"aiperf_artifacts/profile_export.jsonl", ""},
		{"LOGS/power/windows/agentic_power_concurrency_16.json", ""},
		{"samples_gsm8k_2026-09-23T10:00:00.jsonl", ""},
		{"with space.json", ""},
		{"..hidden", ""},
		{"a..b/c", ""},
		{"", "empty name"},
		{".", `name is "."`},
		{"/etc/passwd", "absolute path"},
		{"/", "absolute path"},
		{"C:/Windows/x", "absolute path"},
		{"c:x", "absolute path"},
		{`C:\x`, "backslash in name"},
		{`a\b`, "backslash in name"},
		{`..\evil`, "backslash in name"},
		{"..", `".." path element`},
		{"../evil", `".." path element`},
		{"a/../../evil", `".." path element`},
		{"a/..", `".." path element`},
		{"a\x00b", "NUL byte in name"},
		{"a\nb", "control character in name"},
		{"a\x7fb", "control character in name"},
		{"logs/caf\xe9.log", "name is not valid UTF-8"},
		{"./a", `non-canonical path (empty or "." element)`},
		{"a/./b", `non-canonical path (empty or "." element)`},
		{"a//b", `non-canonical path (empty or "." element)`},
		{"a/", `non-canonical path (empty or "." element)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, entryNameProblem(tt.name))
		})
	}
}

func TestValidArtifactName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want bool
	}{
		{"bmk_dsr1_8k1k_fp4_sglang_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-none_conc64_b200-dgxc_03_recipe-3f1c2a9b7d5e4c6a", true},
		{"run-stats", true},
		{"qwen3.5_8k1k", true},
		{"a+b", true},
		{"0", true},
		{"", false},
		{".hidden", false},
		{"_x", false},
		{"-x", false},
		{"has space", false},
		{"colon:name", false},
		{"tab\tname", false},
		{"slash/name", false},
		{"ünicode", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, validArtifactName(tt.name))
		})
	}
}

func TestDisplayName(t *testing.T) {
	t.Parallel()
	require.Equal(t, "a/b.json", displayName("a/b.json"))
	require.Equal(t, "ü.json", displayName("ü.json"))
	require.Equal(t, `"a\x00b"`, displayName("a\x00b"))
	require.Equal(t, `"\xff"`, displayName("\xff"))
}

// FuzzZipEntryName checks that every name the validator accepts is a clean
// relative path that stays inside any directory it is joined to.
func FuzzZipEntryName(f *testing.F) {
	for _, s := range []string{"agg.json", "a/b/c.json", "../x", "/x", `a\b`, "a\x00b", "", ".", "C:/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if entryNameProblem(name) != "" {
			return
		}
		require.True(t, fs.ValidPath(name), "accepted invalid path %q", name)
		require.NotEqual(t, ".", name)
		require.Equal(t, path.Clean(name), name)
		require.False(t, strings.ContainsAny(name, "\\\x00"), "accepted %q", name)
		require.False(t, hasDriveLetter(name))
		require.True(t, filepath.IsLocal(filepath.FromSlash(name)), "not local: %q", name)
		for elem := range strings.SplitSeq(name, "/") {
			require.NotEqual(t, "..", elem)
		}
	})
}
