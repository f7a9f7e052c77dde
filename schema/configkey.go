package schema

import (
	"cmp"
	"reflect"
	"strconv"
	"strings"
)

// ConfigKeyColumns are the columns of the configs natural key (the
// configs_natural_key constraint of migration 000001), in key order: the
// JSON names of Config's fields, in field order. The store and the compare
// build their SQL from it; the store's tests hold the constraint to it.
func ConfigKeyColumns() []string {
	t := reflect.TypeFor[Config]()
	cols := make([]string, t.NumField())
	for i := range cols {
		cols[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return cols
}

// CompareConfigs orders configs by their natural key, column by column in
// key order (false before true).
func CompareConfigs(a, b Config) int {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		fa, fb := va.Field(i), vb.Field(i)
		var c int
		switch fa.Kind() {
		case reflect.String:
			c = cmp.Compare(fa.String(), fb.String())
		case reflect.Int:
			c = cmp.Compare(fa.Int(), fb.Int())
		case reflect.Bool:
			c = cmp.Compare(boolInt(fa.Bool()), boolInt(fb.Bool()))
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// KeyFields are pointers to c's fields in key order (ConfigKeyColumns),
// for a scan of those columns.
func (c *Config) KeyFields() []any {
	return []any{&c.Hardware, &c.Framework, &c.Model, &c.Precision, &c.SpecMethod, &c.Disagg, &c.IsMultinode,
		&c.PrefillTP, &c.PrefillEP, &c.PrefillDPAttention, &c.PrefillNumWorkers,
		&c.DecodeTP, &c.DecodeEP, &c.DecodeDPAttention, &c.DecodeNumWorkers, &c.NumPrefillGPU, &c.NumDecodeGPU}
}

// keyParts are c's natural key as strings, in key order, followed by more
// (a row's own key fields), for the row keys' encoding (jsonStrings).
func (c *Config) keyParts(more ...string) []string {
	parts := make([]string, 0, 17+len(more))
	parts = append(parts, c.Hardware, c.Framework, c.Model, c.Precision, c.SpecMethod,
		strconv.FormatBool(c.Disagg), strconv.FormatBool(c.IsMultinode),
		strconv.Itoa(c.PrefillTP), strconv.Itoa(c.PrefillEP), strconv.FormatBool(c.PrefillDPAttention), strconv.Itoa(c.PrefillNumWorkers),
		strconv.Itoa(c.DecodeTP), strconv.Itoa(c.DecodeEP), strconv.FormatBool(c.DecodeDPAttention), strconv.Itoa(c.DecodeNumWorkers),
		strconv.Itoa(c.NumPrefillGPU), strconv.Itoa(c.NumDecodeGPU))
	return append(parts, more...)
}
