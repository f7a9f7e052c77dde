package cli

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// TestQuietByDefault: on a terminal outside CI the log level defaults to
// warn; a level asked for by flag or environment, CI, GitHub Actions or a
// stderr that is not a terminal keep today's default (info).
func TestQuietByDefault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		vars     map[string]string
		terminal bool
		quiet    bool
	}{
		{"terminal", nil, nil, true, true},
		{"not a terminal", nil, nil, false, false},
		{"CI", nil, map[string]string{"CI": "true"}, true, false},
		{"GitHub Actions", nil, map[string]string{"GITHUB_ACTIONS": "true"}, true, false},
		{"--log-level", []string{"--log-level", "info"}, nil, true, false},
		{"INGEST_LOG_LEVEL", nil, map[string]string{"INGEST_LOG_LEVEL": "info"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			getenv := func(k string) string { return tt.vars[k] }
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			s := newSettings(fs, getenv)
			c := addCommon(s)
			require.NoError(t, fs.Parse(tt.args))
			require.NoError(t, s.resolve())
			require.Equal(t, tt.quiet, quietByDefault(c.logLevel, getenv, tt.terminal))
		})
	}
}
