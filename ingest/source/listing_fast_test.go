package source

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fastSeeds are listings the fast path must parse itself, each giving
// what parseListing gives.
func fastSeeds(t testing.TB) map[string]string {
	demo, err := os.ReadFile(filepath.Join("testdata", "listing", "demo-run.json"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), ListingFile)
	require.NoError(t, WriteListing(path, benchRun(), benchEntries(40)))
	genData, err := os.ReadFile(path)
	require.NoError(t, err)
	return map[string]string{
		"demo-run":                string(demo),
		"generated":               string(genData),
		"api with run":            strings.Replace(apiListing, "%s", runObject, 1),
		"api without run":         strings.Replace(apiListing, "%s", "", 1),
		"empty artifacts":         `{"total_count": 0, "artifacts": []}`,
		"nulls":                   `{"total_count": null, "artifacts": [{"id": 1, "name": "a", "created_at": null, "digest": null, "size_in_bytes": null, "expired": null, "archive_download_url": null, "workflow_run": null}], "run": null}`,
		"null keeps zero":         `{"artifacts": [{"id": 1, "name": "a", "expired": null}, {"id": 2, "name": "b", "expired": true}]}`,
		"minus zero":              `{"artifacts": [{"id": 1, "name": "a", "size_in_bytes": -0}]}`,
		"unknown keys":            `{"artifacts": [{"id": 1, "name": "a", "x": {"id": "s\"t", "y": [1, {"z": null}]}, "n": 1e5, "s": "\u00e9"}], "extra": [1, "]"]}`,
		"utf-8 name":              `{"artifacts": [{"id": 1, "name": "bmk_é_日本"}]}`,
		"workflow_run first wins": `{"artifacts": [{"id": 1, "name": "a", "workflow_run": {"id": 0, "head_sha": "x"}}, {"id": 2, "name": "b", "workflow_run": {"id": 9, "head_branch": "m", "head_sha": "y", "other": [1]}}, {"id": 3, "name": "c", "workflow_run": {"id": 10}}]}`,
		"run and workflow_run":    `{"run": {"id": 5, "name": "r"}, "artifacts": [{"id": 1, "name": "a", "workflow_run": {"id": 9, "head_branch": "m", "head_sha": "y"}}]}`,
		"whitespace":              " \n\t{ \"artifacts\" :[ {\"id\":1 ,\"name\" : \"a\" } , { \"id\" : 2, \"name\":\"b\"} ] } \r\n",
	}
}

// fallbackSeeds are inputs the fast path must leave to parseListing: an
// error, another shape, or something it does not decode itself.
var fallbackSeeds = map[string]string{
	"empty":               "",
	"truncated":           `{"artifacts": [`,
	"top-level array":     `[{"id": 1, "name": "a"}]`,
	"jq lines":            `{"id": 1, "name": "a"}` + "\n" + `{"id": 2, "name": "b"}`,
	"two pages":           `{"artifacts": [{"id": 1, "name": "a"}]} {"artifacts": [{"id": 2, "name": "b"}]}`,
	"number":              "42",
	"artifacts object":    `{"total_count": 1, "artifacts": {}}`,
	"artifacts null":      `{"artifacts": null}`,
	"no artifacts":        `{"total_count": 0}`,
	"entry not object":    `{"artifacts": [42]}`,
	"id string":           `{"artifacts": [{"id": "abc", "name": "a"}]}`,
	"id fraction":         `{"artifacts": [{"id": 1.0, "name": "a"}]}`,
	"id exponent":         `{"artifacts": [{"id": 1e3, "name": "a"}]}`,
	"id huge":             `{"artifacts": [{"id": 123456789012345678901, "name": "a"}]}`,
	"id 19 digits":        `{"artifacts": [{"id": 1234567890123456789, "name": "a"}]}`,
	"no name":             `{"artifacts": [{"id": 1}]}`,
	"no id":               `{"artifacts": [{"name": "a"}]}`,
	"duplicate ids":       `{"artifacts": [{"id": 7, "name": "a"}, {"id": 7, "name": "b"}]}`,
	"bad digest":          `{"artifacts": [{"id": 1, "name": "a", "digest": "sha256:xyz"}]}`,
	"duplicate key":       `{"total_count": 1, "total_count": 1, "artifacts": []}`,
	"duplicate inner key": `{"artifacts": [{"id": 1, "id": 2, "name": "a"}]}`,
	"negative total":      `{"total_count": -1, "artifacts": []}`,
	"total fraction":      `{"total_count": 1.5, "artifacts": []}`,
	"upper-case key":      `{"artifacts": [{"ID": 1, "name": "a"}]}`,
	"both cases":          `{"artifacts": [{"id": 1, "Id": 2, "name": "a"}]}`,
	"kelvin key":          "{\"artifacts\": [{\"id\": 1, \"name\": \"a\", \"expired\": false, \"\u212a\": 1}]}",
	"long s key":          "{\"artifacts\": [{\"id\": 1, \"name\": \"a\", \"\u017fize_in_bytes\": 1}]}",
	"upper top-level":     `{"Artifacts": [{"id": 1, "name": "a"}], "artifacts": []}`,
	"escaped name":        `{"artifacts": [{"id": 1, "name": "a\nb"}]}`,
	"escaped key":         `{"artifacts": [{"\u0069d": 1, "name": "a"}]}`,
	"bool name":           `{"artifacts": [{"id": 1, "name": true}]}`,
	"string expired":      `{"artifacts": [{"id": 1, "name": "a", "expired": "no"}]}`,
	"workflow_run array":  `{"artifacts": [{"id": 1, "name": "a", "workflow_run": []}]}`,
	"workflow_run bad id": `{"artifacts": [{"id": 1, "name": "a", "workflow_run": {"id": "x"}}]}`,
	"run string":          `{"artifacts": [], "run": "x"}`,
	"run bad attempt":     `{"artifacts": [], "run": {"id": 17, "run_attempt": 40000}}`,
	"run bad time":        `{"artifacts": [], "run": {"created_at": "soon"}}`,
	"bad created_at":      `{"artifacts": [{"id": 1, "name": "a", "created_at": "yesterday"}]}`,
	"nul":                 "{\"artifacts\": [{\"id\": 1, \"name\": \"a\\u0000\"}]}",
	"invalid utf-8":       "{\"artifacts\": [{\"id\": 1, \"name\": \"a\xff\"}]}",
	"byte order mark":     "\uFEFF{\"artifacts\": []}",
	"trailing garbage":    `{"artifacts": []} nope`,
	"leading zero":        `{"artifacts": [{"id": 01, "name": "a"}]}`,
	"negative size":       `{"artifacts": [{"id": 1, "name": "a", "size_in_bytes": -1}]}`,
	"trailing comma":      `{"artifacts": [{"id": 1, "name": "a"},]}`,
	"deep":                `{"artifacts": [], "x": ` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`,
	"underscore-free key": `{"artifacts": [{"id": 1, "name": "a", "createdat": "x"}]}`, // conservative
	"single artifact":     `{"id": 1, "name": "a"}`,
}

func TestListingFastPath(t *testing.T) {
	t.Parallel()
	for name, input := range fastSeeds(t) {
		t.Run("fast/"+name, func(t *testing.T) {
			t.Parallel()
			fast, ok := parseListingFast([]byte(input), true)
			require.True(t, ok, "the fast path should take this listing")
			slow, err := parseListing(strings.NewReader(input), true)
			require.NoError(t, err)
			require.Equal(t, slow, fast)
			require.True(t, reflect.DeepEqual(slow, fast))
		})
	}
	for name, input := range fallbackSeeds {
		t.Run("fallback/"+name, func(t *testing.T) {
			t.Parallel()
			_, ok := parseListingFast([]byte(input), true)
			require.False(t, ok, "the fast path should leave this to parseListing")
			// What Open sees is parseListing's result, error included.
			doc, err := parseListingData([]byte(input), true)
			slow, slowErr := parseListing(strings.NewReader(input), true)
			require.Equal(t, slowErr, err)
			require.Equal(t, slow, doc)
		})
	}
}

func TestReadListingUsesFastPathResult(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "listing", "demo-run.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	doc, err := readListing(path, ListingFile)
	require.NoError(t, err)
	slow, err := parseListing(bytes.NewReader(data), true)
	require.NoError(t, err)
	require.Equal(t, slow, doc)
	require.Len(t, doc.entries, 40)
	require.EqualValues(t, 28485856738, doc.run.RunID)
}

// FuzzListingFastMatchesSlow holds parseListingFast to parseListing: what
// the fast path accepts, parseListing accepts too, with the same result.
func FuzzListingFastMatchesSlow(f *testing.F) {
	for _, input := range fastSeeds(f) {
		f.Add([]byte(input), true)
		f.Add([]byte(input), false)
	}
	for _, input := range fallbackSeeds {
		f.Add([]byte(input), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, requireID bool) {
		fast, ok := parseListingFast(data, requireID)
		if !ok {
			return
		}
		slow, err := parseListing(bytes.NewReader(data), requireID)
		if err != nil {
			t.Fatalf("fast path accepted what parseListing refuses: %v", err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast path: %+v\nparseListing: %+v", fast, slow)
		}
	})
}

// TestListingFastMatchesSlowRandom assembles listings from parts that
// byte mutation rarely finds (keys in other cases, values of every kind
// in every field) and holds the fast path to parseListing on each.
func TestListingFastMatchesSlowRandom(t *testing.T) {
	t.Parallel()
	keys := []string{"id", "name", "created_at", "size_in_bytes", "digest", "expired", "archive_download_url", "workflow_run",
		"ID", "Name", "NAME", "createdAt", "created-at", "sizeinbytes", "Digest", "eXpired", "workflow_Run",
		"node_id", "url", "updated_at", "expires_at", "x", "", "ıd", "\u212aey", "\u017fize_in_bytes", `i\u0064`, `n\u0061me`}
	values := []string{"0", "1", "7", "-0", "-1", "42", "1e3", "1.0", "1.5", "9223372036854775807", "123456789012345678", "1234567890123456789",
		"null", "true", "false", `""`, `"a"`, `"bmk_a"`, `"a\nb"`, `"\u00e9"`, `"é"`, `"2026-09-23T10:00:00Z"`, `"2026-09-23T11:30:00.5+02:00"`, `"yesterday"`,
		`"sha256:` + strings.Repeat("0a", 32) + `"`, `"sha256:xyz"`, "{}", "[]", `[1, {"a": "}"}]`,
		`{"id": 9, "head_branch": "main", "head_sha": "abc"}`, `{"id": "9"}`, `{"ID": 9, "head_sha": "x"}`, `{"id": 9, "head_sha": "\u0041"}`, `{"id": 1.5}`}
	runs := []string{"", `, "run": null`, `, "run": {"id": 5, "run_attempt": 2, "head_branch": "r"}`, `, "run": {"id": -1}`, `, "run": "x"`, `, "Run": {}`}
	totals := []string{"", `"total_count": 3, `, `"total_count": null, `, `"total_count": -1, `, `"total_count": 2.0, `, `"Total_Count": 1, `, `"other": [1], `}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	accepted := 0
	for range 20000 {
		var b strings.Builder
		b.WriteString("{" + pick(totals) + `"artifacts": [`)
		for a := range rng.IntN(4) {
			if a > 0 {
				b.WriteString(", ")
			}
			b.WriteString(fmt.Sprintf(`{"id": %d, "name": "bmk_%d"`, 1+rng.IntN(6), a))
			used := map[string]bool{"id": true, "name": true}
			for range rng.IntN(4) {
				k := pick(keys)
				if rng.IntN(2) == 0 {
					k = pick(keys[:8])
				}
				if used[k] {
					continue
				}
				used[k] = true
				b.WriteString(`, "` + k + `": ` + pick(values))
			}
			b.WriteString("}")
		}
		b.WriteString("]" + pick(runs) + "}")
		data := []byte(b.String())
		for _, requireID := range []bool{true, false} {
			fast, ok := parseListingFast(data, requireID)
			slow, err := parseListing(bytes.NewReader(data), requireID)
			if !ok {
				continue
			}
			accepted++
			require.NoError(t, err, "%s", data)
			require.True(t, reflect.DeepEqual(fast, slow), "%s\nfast: %+v\nslow: %+v", data, fast, slow)
		}
	}
	t.Logf("fast path took %d of 40000", accepted)
	require.Greater(t, accepted, 3000)
}
