package catalog_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/catalog"
)

func TestValueTextAndDescribe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v              any
		text, describe string
	}{
		{"H200", "H200", `"H200"`},
		{json.Number("8"), "8", "8"},
		{json.Number("1e3"), "1e3", "1e3"},
		{true, "true", "true"},
		{float64(0.5), "0.5", "0.5"},
		{7, "7", "7"},
		{nil, "", "null"},
		{map[string]any{"a": 1}, "", "an object"},
		{[]any{1}, "", "an array"},
	} {
		require.Equal(t, tc.text, catalog.ValueText(tc.v), "%#v", tc.v)
		require.Equal(t, tc.describe, catalog.DescribeValue(tc.v), "%#v", tc.v)
	}
}
