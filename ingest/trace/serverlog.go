package trace

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Server log KV-cache capacity lines (docs/formats.md, "AgentX traces,
// server logs and datasets"): vLLM prints "GPU KV cache size: N tokens" per
// EngineCore (tagged EngineCore_DP<n> with data parallelism); SGLang prints
// max_total_num_tokens=N per data-parallel rank.
var (
	vllmKV    = regexp.MustCompile(`GPU KV cache size: ([0-9][0-9,]*) tokens`)
	vllmTag   = regexp.MustCompile(`\b(EngineCore(?:_DP\d+)?)\b`)
	sglangKV  = regexp.MustCompile(`max_total_num_tokens=([0-9]+)`)
	sglangDP  = regexp.MustCompile(`\bDP(\d+)\b`)
	maxLogLen = 1 << 20
)

// KVScanner finds the KV-cache capacity in a server log written to it.
// Lines longer than 1 MiB are skipped.
type KVScanner struct {
	logLines
	vllm    map[string]int64 // per EngineCore tag: last value
	vllmRaw int64            // untagged lines, summed
	sglang  map[string]int64 // per DP rank ("" without one): last value
}

// NewKVScanner returns an empty scanner.
func NewKVScanner() *KVScanner {
	return &KVScanner{vllm: map[string]int64{}, sglang: map[string]int64{}}
}

func (k *KVScanner) Write(p []byte) (int, error) {
	k.write(p, k.line)
	return len(p), nil
}

// logLines splits a log written to it in pieces into lines; a line longer
// than maxLogLen is skipped.
type logLines struct {
	partial []byte
	skip    bool
}

// write hands line each whole line of p, keeping a last partial one.
func (s *logLines) write(p []byte, line func([]byte)) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(s.partial)+len(p) > maxLogLen {
				s.partial, s.skip = s.partial[:0], true
			} else if !s.skip {
				s.partial = append(s.partial, p...)
			}
			return
		}
		if !s.skip {
			if len(s.partial) > 0 {
				s.partial = append(s.partial, p[:i]...)
				line(s.partial)
				s.partial = s.partial[:0]
			} else {
				line(p[:i])
			}
		}
		s.skip = false
		p = p[i+1:]
	}
}

// flush hands line a last line that has no newline.
func (s *logLines) flush(line func([]byte)) {
	if !s.skip && len(s.partial) > 0 {
		line(s.partial)
	}
	s.partial = s.partial[:0]
}

func (k *KVScanner) line(l []byte) {
	if bytes.Contains(l, []byte("GPU KV cache size")) {
		m := vllmKV.FindSubmatch(l)
		if m == nil {
			return
		}
		v, err := strconv.ParseInt(strings.ReplaceAll(string(m[1]), ",", ""), 10, 64)
		if err != nil {
			return
		}
		if t := vllmTag.FindSubmatch(l); t != nil {
			k.vllm[string(t[1])] = v
		} else {
			k.vllmRaw += v
		}
		return
	}
	if bytes.Contains(l, []byte("max_total_num_tokens=")) {
		m := sglangKV.FindSubmatch(l)
		if m == nil {
			return
		}
		v, err := strconv.ParseInt(string(m[1]), 10, 64)
		if err != nil {
			return
		}
		dp := ""
		if t := sglangDP.FindSubmatch(l); t != nil {
			dp = string(t[1])
		}
		k.sglang[dp] = v
	}
}

// Tokens is the capacity found so far, nil when the log names none.
func (k *KVScanner) Tokens() *int64 {
	k.flush(k.line)
	var sum int64
	found := false
	for _, v := range k.vllm {
		sum += v
		found = true
	}
	if k.vllmRaw > 0 {
		sum += k.vllmRaw
		found = true
	}
	if !found {
		for _, v := range k.sglang {
			sum += v
			found = true
		}
	}
	if !found || sum <= 0 {
		return nil
	}
	return &sum
}

// IsTarball reports whether a server log file is a gzip tarball to unpack.
func IsTarball(name string) bool {
	return strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".tgz")
}

// TarballDir is the directory a tarball's entries are named under: its
// name without the .tar.gz or .tgz suffix, where the reference extracts
// multinode_server_logs.tar.gz (multinode_server_logs/logs/decode_0.log).
func TarballDir(name string) string {
	return strings.TrimSuffix(strings.TrimSuffix(name, ".tar.gz"), ".tgz")
}

// IsLogFile reports whether a file (or tarball entry) is a log whose lines
// may name the KV-cache capacity.
func IsLogFile(name string) bool {
	ext := path.Ext(name)
	return ext == ".log" || ext == ".out"
}

// ErrTruncated marks a tarball that ends before its last entry does.
var ErrTruncated = errors.New("truncated tarball")

// WalkTarball streams a gzip tarball: fn is called for every regular
// entry with a safe relative name and a reader of its bytes. A tarball that
// ends early or is corrupt is an error naming the entry, and so is an
// entry whose name is unsafe, not UTF-8 or holds a NUL byte (PostgreSQL
// text cannot hold it).
func WalkTarball(r io.Reader, fn func(name string, size int64, r io.Reader) error) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("not a gzip stream: %w", err)
	}
	tr := tar.NewReader(zr)
	entries := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return tarError(entries, "", err)
		}
		entries++
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if reason := BadName(h.Name); reason != "" {
			return fmt.Errorf("entry %q: %s", h.Name, reason)
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if name == "." || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("entry %q: unsafe path", h.Name)
		}
		if err := fn(name, h.Size, tr); err != nil {
			return tarError(entries, name, err)
		}
	}
	// Read the gzip trailer: a tarball cut after its end-of-archive
	// blocks still fails its checksum.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return tarError(entries, "", err)
	}
	return nil
}

// BadName says why a file name cannot be stored as PostgreSQL text, or ""
// when it can.
func BadName(name string) string {
	switch {
	case !utf8.ValidString(name):
		return "name is not valid UTF-8"
	case strings.IndexByte(name, 0) >= 0:
		return "NUL byte in name"
	}
	return ""
}

func tarError(entries int, name string, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		if name != "" {
			return fmt.Errorf("%w: entry %q is cut short", ErrTruncated, name)
		}
		return fmt.Errorf("%w after %d entries", ErrTruncated, entries)
	}
	if name != "" {
		return fmt.Errorf("entry %q: %w", name, err)
	}
	return err
}
