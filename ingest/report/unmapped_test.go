package report

import (
	"bytes"
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
