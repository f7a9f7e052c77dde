package telemetry

import (
	"bufio"
	"bytes"
	"io"
	"sort"
	"strings"
)

// DCGMHosts lists the host names of a DCGM samples.csv, sorted, by a byte
// scan of the hostname column (no CSV decoding): Parse returns one series
// per host, and the ingest needs their number before parsing. A file that
// is not a DCGM samples.csv yields no hosts; Parse reports what is wrong.
func DCGMHosts(r io.Reader) ([]string, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	header, err := br.ReadString('\n')
	if err != nil && err != io.EOF {
		return nil, err
	}
	col := -1
	for i, n := range strings.Split(strings.TrimRight(header, "\r\n"), ",") {
		if strings.EqualFold(strings.TrimSpace(n), "hostname") {
			col = i
			break
		}
	}
	if col < 0 {
		_, err := io.Copy(io.Discard, br)
		return nil, err
	}
	set := map[string]struct{}{}
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			f := line
			for i := 0; i < col && f != nil; i++ {
				if j := bytes.IndexByte(f, ','); j >= 0 {
					f = f[j+1:]
				} else {
					f = nil
				}
			}
			if f != nil {
				if j := bytes.IndexAny(f, ",\r\n"); j >= 0 {
					f = f[:j]
				}
				if h := bytes.TrimSpace(f); len(h) > 0 {
					if _, ok := set[string(h)]; !ok {
						set[string(h)] = struct{}{}
					}
				}
			}
		}
		for err == bufio.ErrBufferFull { // an overlong line: skip its rest
			_, err = br.ReadSlice('\n')
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	sort.Strings(out)
	return out, nil
}
