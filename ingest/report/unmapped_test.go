package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/schema"
)

func TestUnmappedEntities(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		unmapped schema.Unmapped
		golden   string
	}{
		{"nothing unmapped", schema.Unmapped{}, ""},
		{"empty lists", schema.Unmapped{Models: []string{}, Datasets: []string{}}, ""},
		{"one kind", schema.Unmapped{Hardware: []string{"imaginary-gpu-999"}}, "unmapped_one_kind.golden"},
		{"several kinds, unsorted with repeats", schema.Unmapped{
			Models:      []string{"zeta-70b", "alpha-8b", "zeta-70b"},
			Hardware:    []string{"mi455x", "b400", "mi455x"},
			Precisions:  []string{"nvfp6", ""},
			Frameworks:  []string{"trtllm-nightly"},
			SpecMethods: []string{"medusa", "eagle9", "medusa"},
			Datasets:    []string{"weka_multi_turn_v9"},
		}, "unmapped_several_kinds.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			wrote, err := UnmappedEntities(&buf, tt.unmapped)
			require.NoError(t, err)
			if tt.golden == "" {
				require.False(t, wrote)
				require.Zero(t, buf.Len())
				return
			}
			require.True(t, wrote)
			requireGolden(t, tt.golden, buf.String())
		})
	}
}

func TestUnmappedEntitiesDoesNotReorderInput(t *testing.T) {
	t.Parallel()
	models := []string{"b", "a", "b"}
	_, err := UnmappedEntities(&bytes.Buffer{}, schema.Unmapped{Models: models})
	require.NoError(t, err)
	require.Equal(t, []string{"b", "a", "b"}, models)
}

func TestWriteUnmappedFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		unmapped  schema.Unmapped
		existing  string
		wantWrote bool
		want      string
	}{
		{name: "nothing unmapped writes nothing", unmapped: schema.Unmapped{}},
		{name: "nothing unmapped leaves an existing file", unmapped: schema.Unmapped{}, existing: "old\n", want: "old\n"},
		{
			name:      "writes the file",
			unmapped:  schema.Unmapped{Models: []string{"b", "a"}},
			wantWrote: true,
			want:      "{\n  \"models\": [\n    \"a\",\n    \"b\"\n  ],\n  \"hardware\": [],\n  \"precisions\": [],\n  \"datasets\": [],\n  \"frameworks\": [],\n  \"specMethods\": []\n}\n",
		},
		{
			name:      "replaces an existing file",
			unmapped:  schema.Unmapped{Datasets: []string{"d"}},
			existing:  "old and much longer than the new content of the file, which must not keep a tail of it\n",
			wantWrote: true,
			want:      "{\n  \"models\": [],\n  \"hardware\": [],\n  \"precisions\": [],\n  \"datasets\": [\n    \"d\"\n  ],\n  \"frameworks\": [],\n  \"specMethods\": []\n}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "unmapped-entities.json")
			if tt.existing != "" {
				require.NoError(t, os.WriteFile(path, []byte(tt.existing), 0o644))
			}
			wrote, err := WriteUnmappedFile(path, tt.unmapped)
			require.NoError(t, err)
			require.Equal(t, tt.wantWrote, wrote)

			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			if tt.want == "" {
				require.Empty(t, entries)
				return
			}
			require.Len(t, entries, 1, "no temporary file is left behind")
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, tt.want, string(got))
			info, err := os.Stat(path)
			require.NoError(t, err)
			if tt.wantWrote {
				require.Equal(t, os.FileMode(0o644), info.Mode().Perm())
			}
		})
	}
}

func TestWriteUnmappedFileMissingDirectory(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "missing", "unmapped-entities.json")
	wrote, err := WriteUnmappedFile(path, schema.Unmapped{Models: []string{"m"}})
	require.Error(t, err)
	require.False(t, wrote)
	require.Contains(t, err.Error(), path)
}
