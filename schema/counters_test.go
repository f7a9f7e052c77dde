package schema

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// fill sets every int64 field of the struct v points to (and of its
// struct fields) to a distinct value from next, counting up.
func fill(v reflect.Value, next *int64) {
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Struct:
			fill(f, next)
		case reflect.Int64:
			*next++
			f.SetInt(*next)
		}
	}
}

// TestCounterTags: every int64 field of Stats and Details says what it
// counts, so Add and ZeroWritten cannot leave a new counter out.
func TestCounterTags(t *testing.T) {
	t.Parallel()
	for _, typ := range []reflect.Type{reflect.TypeFor[Stats](), reflect.TypeFor[Details]()} {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Type.Kind() != reflect.Int64 {
				continue
			}
			require.Contains(t, []string{"seen", "written", "-"}, f.Tag.Get(counterTag),
				"%s.%s: tag it counter:\"seen\", \"written\" or \"-\"", typ.Name(), f.Name)
		}
	}
}

// TestAddCounters: Add doubles every counter of a summary added to itself
// and leaves the fields tagged "-" and every other field alone.
func TestAddCounters(t *testing.T) {
	t.Parallel()
	var s Summary
	var n int64
	fill(reflect.ValueOf(&s.Rows).Elem(), &n)
	fill(reflect.ValueOf(&s.Stats).Elem(), &n)
	fill(reflect.ValueOf(&s.Details).Elem(), &n)
	s.Details.AttemptOrder, s.Details.PurgedRun = "listing", true
	before := s
	s.AddCounters(before.Counters())
	check := func(got, was reflect.Value, name string) {
		for i := range got.NumField() {
			f, tag := got.Type().Field(i), got.Type().Field(i).Tag.Get(counterTag)
			switch {
			case f.Type.Kind() == reflect.Int64 && tag != "-":
				require.Equal(t, 2*was.Field(i).Int(), got.Field(i).Int(), "%s.%s", name, f.Name)
			default:
				require.Equal(t, was.Field(i).Interface(), got.Field(i).Interface(), "%s.%s", name, f.Name)
			}
		}
	}
	for _, r := range []struct {
		name     string
		got, was any
	}{
		{"Benchmark", s.Rows.Benchmark, before.Rows.Benchmark}, {"Eval", s.Rows.Eval, before.Rows.Eval},
		{"Trace", s.Rows.Trace, before.Rows.Trace}, {"Power", s.Rows.Power, before.Rows.Power},
		{"Stats", s.Stats, before.Stats}, {"Details", s.Details, before.Details},
	} {
		check(reflect.ValueOf(r.got), reflect.ValueOf(r.was), r.name)
	}
}

// TestZeroWritten: only the counters tagged "written" become 0.
func TestZeroWritten(t *testing.T) {
	t.Parallel()
	var st Stats
	var dt Details
	var n int64
	fill(reflect.ValueOf(&st).Elem(), &n)
	fill(reflect.ValueOf(&dt).Elem(), &n)
	st.ZeroWritten()
	dt.ZeroWritten()
	written := 0
	for _, v := range []reflect.Value{reflect.ValueOf(st), reflect.ValueOf(dt)} {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Type.Kind() != reflect.Int64 {
				continue
			}
			if f.Tag.Get(counterTag) == "written" {
				written++
				require.Zero(t, v.Field(i).Int(), f.Name)
			} else {
				require.NotZero(t, v.Field(i).Int(), f.Name)
			}
		}
	}
	require.Equal(t, 17, written, "the counters of what a run writes")
}

// TestOverrideResultAdd: Add sums every count and Changed sees each one.
func TestOverrideResultAdd(t *testing.T) {
	t.Parallel()
	var r OverrideResult
	var n int64
	fill(reflect.ValueOf(&r).Elem(), &n)
	before := r
	r.Add(before)
	v, was := reflect.ValueOf(r), reflect.ValueOf(before)
	for i := range v.NumField() {
		if v.Field(i).Kind() == reflect.Int64 {
			require.Equal(t, 2*was.Field(i).Int(), v.Field(i).Int(), v.Type().Field(i).Name)
			one := OverrideResult{}
			reflect.ValueOf(&one).Elem().Field(i).SetInt(1)
			require.True(t, one.Changed(), v.Type().Field(i).Name)
		}
	}
	require.False(t, OverrideResult{}.Changed())
}
