package github_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/github"
)

func TestTerminalProgress(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := github.NewTerminalProgress(&buf)
	p.Start(2, 3<<20)
	p.Done("a", 1<<20, false)
	p.Done("b", 2<<20, true)
	p.Finish(nil)
	out := buf.String()
	require.True(t, strings.HasPrefix(out, "\r\033[Kartifacts 0/2 (0 cached)  0.0 MiB/3.0 MiB downloaded"), out)
	require.Contains(t, out, "\r\033[Kartifacts 2/2 (1 cached)  1.0 MiB/3.0 MiB downloaded")
	require.Regexp(t, ` done in [0-9.]+m?s\n$`, out)

	buf.Reset()
	p = github.NewTerminalProgress(&buf)
	p.Start(1, 0)
	p.Finish(errors.New("boom"))
	require.Contains(t, buf.String(), " stopped in ")
}
