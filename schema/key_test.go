package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// jsonStringsCases are parts of keys that take either path of jsonStrings.
var jsonStringsCases = [][]string{
	nil,
	{},
	{""},
	{"b200", "sglang", "dsr1", "fp4", "none", "false", "true", "8", "1", "null", "\x00null", "abc123"},
	{"a<b", "x"},
	{"x", "a>b"},
	{"a&b"},
	{`q"uote`, `back\slash`},
	{"tab\t", "nl\n", "cr\r", "bs\b", "ff\f", "nul\x00", "del\x7f", "esc\x1b"},
	{"é", "日本", "\u2028", "\u2029", "\xff", "\xc3"},
	{"\x00null", "\x00nul", "x\x00null"},
	{"~ !#$%'()*+,-./:;=?@[]^_`{|}"},
}

// TestJSONStringsIsMarshal: a key's JSON is json.Marshal's, byte for byte.
func TestJSONStringsIsMarshal(t *testing.T) {
	t.Parallel()
	for _, parts := range jsonStringsCases {
		want, err := json.Marshal(parts)
		require.NoError(t, err)
		require.Equal(t, string(want), jsonStrings(parts), "%q", parts)
	}
}

func FuzzJSONStringsIsMarshal(f *testing.F) {
	for _, parts := range jsonStringsCases {
		for _, p := range parts {
			f.Add(p, "b200")
		}
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		parts := []string{a, b, a + b}
		want, err := json.Marshal(parts)
		require.NoError(t, err)
		require.Equal(t, string(want), jsonStrings(parts))
	})
}

// TestKeyStartsWithTheConfigKey: a point's key begins with its config's
// natural key, column by column in ConfigKeyColumns order, and configs
// order by that key.
func TestKeyStartsWithTheConfigKey(t *testing.T) {
	t.Parallel()
	var c Config
	v := reflect.ValueOf(&c).Elem()
	want := make([]string, v.NumField())
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			f.SetString(fmt.Sprintf("s%d", i))
		case reflect.Int:
			f.SetInt(int64(i))
		case reflect.Bool:
			f.SetBool(i%2 == 0)
		}
		want[i] = fmt.Sprint(v.Field(i).Interface())
	}
	require.Len(t, ConfigKeyColumns(), len(want))
	p := BenchmarkPoint{Config: c}
	var parts []string
	require.NoError(t, json.Unmarshal([]byte(p.Key()), &parts))
	require.Equal(t, want, parts[:len(want)])
	for i := range v.NumField() {
		lo, hi := c, c
		fl, fh := reflect.ValueOf(&lo).Elem().Field(i), reflect.ValueOf(&hi).Elem().Field(i)
		switch fl.Kind() {
		case reflect.String:
			fl.SetString("a")
			fh.SetString("b")
		case reflect.Int:
			fl.SetInt(1)
			fh.SetInt(2)
		case reflect.Bool:
			fl.SetBool(false)
			fh.SetBool(true)
		}
		require.Negative(t, CompareConfigs(lo, hi), ConfigKeyColumns()[i])
		require.Positive(t, CompareConfigs(hi, lo), ConfigKeyColumns()[i])
	}
	require.Zero(t, CompareConfigs(c, c))
}

// TestKeyFieldsAreInKeyOrder: KeyFields points at Config's fields in
// field order, the order of ConfigKeyColumns.
func TestKeyFieldsAreInKeyOrder(t *testing.T) {
	t.Parallel()
	var c Config
	v := reflect.ValueOf(&c).Elem()
	fields := c.KeyFields()
	require.Len(t, fields, v.NumField())
	for i, f := range fields {
		require.Equal(t, v.Field(i).Addr().Interface(), f, ConfigKeyColumns()[i])
	}
}
