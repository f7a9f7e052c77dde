package trace

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func tarball(t *testing.T, entries map[string]string, order []string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for _, name := range order {
		body := entries[name]
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return b.Bytes()
}

func TestWalkTarball(t *testing.T) {
	entries := map[string]string{"./logs/prefill_0.log": strings.Repeat("prefill line\n", 500), "logs/decode_0.log": "decode\n"}
	data := tarball(t, entries, []string{"./logs/prefill_0.log", "logs/decode_0.log"})
	var names []string
	require.NoError(t, WalkTarball(bytes.NewReader(data), func(name string, size int64, r io.Reader) error {
		b, err := io.ReadAll(r)
		require.EqualValues(t, size, len(b))
		names = append(names, name)
		return err
	}))
	require.Equal(t, []string{"logs/prefill_0.log", "logs/decode_0.log"}, names)

	// Cut anywhere, the tarball is reported truncated, never silently short.
	for _, cut := range []int{len(data) / 3, len(data) / 2, len(data) - 10} {
		err := WalkTarball(bytes.NewReader(data[:cut]), func(string, int64, io.Reader) error { return nil })
		require.Error(t, err, "cut at %d", cut)
		require.True(t, errors.Is(err, ErrTruncated), "cut at %d: %v", cut, err)
	}

	hostile := tarball(t, map[string]string{"../../etc/passwd": "x"}, []string{"../../etc/passwd"})
	err := WalkTarball(bytes.NewReader(hostile), func(string, int64, io.Reader) error { return nil })
	require.ErrorContains(t, err, "unsafe path")

	// Names PostgreSQL text cannot hold are refused like unsafe ones (a tar
	// header cannot carry a NUL: BadName covers it for folders),
	// before the entry is read, and the error itself is valid UTF-8.
	for _, c := range []struct{ name, reason string }{
		{"logs/caf\xe9.log", `entry "logs/caf\xe9.log": name is not valid UTF-8`},
		{"logs/\xed\xa0\x80.log", "name is not valid UTF-8"}, // a UTF-8-encoded lone surrogate
	} {
		bad := tarball(t, map[string]string{"logs/ok.log": "ok\n", c.name: "x"}, []string{"logs/ok.log", c.name})
		var seen []string
		err := WalkTarball(bytes.NewReader(bad), func(name string, _ int64, _ io.Reader) error { seen = append(seen, name); return nil })
		require.ErrorContains(t, err, c.reason)
		require.True(t, utf8.ValidString(err.Error()), "%q", err.Error())
		require.Equal(t, []string{"logs/ok.log"}, seen, "the bad entry never reaches fn")
	}

	require.Equal(t, "NUL byte in name", BadName("logs/a\x00b.log"))
	require.Empty(t, BadName("logs/café.log"))

	err = WalkTarball(strings.NewReader("not gzip"), func(string, int64, io.Reader) error { return nil })
	require.ErrorContains(t, err, "not a gzip stream")
}

// FuzzReadProfile: any input yields a profile or an error, never a panic,
// and a profile's timeline is valid JSON with one entry per record.
func FuzzReadProfile(f *testing.F) {
	f.Add([]byte(`{"metadata":{"benchmark_phase":"warmup","request_start_ns":1,"request_end_ns":5},"metrics":{},"error":null}` + "\n"))
	f.Add([]byte(`{"metadata":{"request_start_ns":1e18},"metrics":{"input_sequence_length":3,"time_to_first_token":{"value":"x"}},"error":{"code":500}}`))
	f.Add([]byte("{}\n\n{\"error\":\"boom: bad\"}\n"))
	f.Add([]byte(`{"metadata":{"conversation_id":"a\u0000b","request_start_ns":-4,"request_end_ns":9223372036854775807}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ReadProfile(bytes.NewReader(data))
		if err != nil {
			return
		}
		var b bytes.Buffer
		require.NoError(t, p.WriteTimeline(&b))
		require.True(t, jsonValid(b.Bytes()), "%s", b.String())
		_, err = Derive(p, nil)
		require.NoError(t, err)
	})
}
