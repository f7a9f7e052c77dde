package cli

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// TestSettingPrecedence: for each kind of option, a flag beats the
// environment, which beats the default; the first of several variables
// set wins, a blank one is not set; a value is checked only where it is
// taken from (an invalid variable under a flag is never read).
func TestSettingPrecedence(t *testing.T) {
	t.Parallel()
	type declared struct {
		str, num, enum, dur *setting
		on                  *bool
	}
	declare := func(s *settings) declared {
		return declared{
			str:  s.str("name", "def", "a string", "T_NAME", "T_NAME_OLD"),
			num:  s.intIn("count", "7", 1, 100, "an integer", "T_COUNT"),
			enum: s.enum("mode", "a", []string{"a", "b", "c"}, "an enum", "T_MODE"),
			dur:  s.duration("wait", "2s", "a duration", nil, "T_WAIT"),
			on:   s.flag("on", "a switch", "T_ON"),
		}
	}
	type want struct {
		str   string
		from  string
		num   int64
		enum  string
		dur   time.Duration
		on    bool
		given bool
	}
	tests := []struct {
		name string
		args []string
		vars map[string]string
		want want
	}{
		{"defaults", nil, nil, want{str: "def", num: 7, enum: "a", dur: 2 * time.Second}},
		{"environment", nil,
			map[string]string{"T_NAME": "env", "T_COUNT": "9", "T_MODE": "b", "T_WAIT": "1m", "T_ON": "yes"},
			want{str: "env", from: "T_NAME", num: 9, enum: "b", dur: time.Minute, on: true}},
		{"the first variable set wins", nil, map[string]string{"T_NAME": "first", "T_NAME_OLD": "second"},
			want{str: "first", from: "T_NAME", num: 7, enum: "a", dur: 2 * time.Second}},
		{"a blank variable is not set", nil, map[string]string{"T_NAME": "  ", "T_NAME_OLD": "second"},
			want{str: "second", from: "T_NAME_OLD", num: 7, enum: "a", dur: 2 * time.Second}},
		{"flags beat the environment",
			[]string{"--name", "flag", "--count", "3", "--mode", "c", "--wait", "5ms", "--on=false"},
			map[string]string{"T_NAME": "env", "T_COUNT": "9", "T_MODE": "b", "T_WAIT": "1m", "T_ON": "1"},
			want{str: "flag", num: 3, enum: "c", dur: 5 * time.Millisecond, given: true}},
		{"a flag hides an invalid variable", []string{"--count", "3", "--on"}, map[string]string{"T_COUNT": "many", "T_ON": "perhaps"},
			want{str: "def", num: 3, enum: "a", dur: 2 * time.Second, on: true}},
		{"environment off", nil, map[string]string{"T_ON": "off"}, want{str: "def", num: 7, enum: "a", dur: 2 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			s := newSettings(fs, func(k string) string { return tt.vars[k] })
			d := declare(s)
			require.NoError(t, fs.Parse(tt.args))
			require.NoError(t, s.resolve())
			got := want{str: d.str.String(), from: d.str.from, num: d.num.int64(), enum: d.enum.String(), dur: d.dur.duration(),
				on: *d.on, given: d.str.given}
			require.Equal(t, tt.want, got)
		})
	}
}

// TestSettingErrors: a value an option refuses is an error naming the
// option and, when it came from there, the variable.
func TestSettingErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		vars map[string]string
		want string
	}{
		{"integer flag", []string{"--count", "0"}, nil, `invalid argument "0" for "--count" flag: want an integer from 1 to 100`},
		{"integer variable", nil, map[string]string{"T_COUNT": "0"}, `invalid value "0" for --count (from T_COUNT): want an integer from 1 to 100`},
		{"enum variable", nil, map[string]string{"T_MODE": "d"}, `invalid value "d" for --mode (from T_MODE): want a|b|c`},
		{"duration variable", nil, map[string]string{"T_WAIT": "soon"}, `invalid value "soon" for --wait (from T_WAIT): want a duration such as 90s, 10m or 1h`},
		{"timeout variable", nil, map[string]string{"T_TIMEOUT": "-1s"}, `invalid value "-1s" for --timeout (from T_TIMEOUT): -1s is negative`},
		{"size variable", nil, map[string]string{"T_SIZE": "1TB"}, `invalid value "1TB" for --size (from T_SIZE): want a positive size`},
		{"bool variable", nil, map[string]string{"T_ON": "2"}, `invalid value "2" for --on (from T_ON): want true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			s := newSettings(fs, func(k string) string { return tt.vars[k] })
			s.intIn("count", "7", 1, 100, "an integer", "T_COUNT")
			s.enum("mode", "a", []string{"a", "b", "c"}, "an enum", "T_MODE")
			s.duration("wait", "2s", "a duration", nil, "T_WAIT")
			s.timeout("timeout", "10m", "a timeout", "T_TIMEOUT")
			s.size("size", "1MiB", "a size", "T_SIZE")
			s.flag("on", "a switch", "T_ON")
			err := fs.Parse(tt.args)
			if err == nil {
				err = s.resolve()
			}
			require.ErrorContains(t, err, tt.want)
		})
	}
}
