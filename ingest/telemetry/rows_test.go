package telemetry

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
)

// FuzzRowReaderMatchesEncodingCSV: the row reader gives the records, lines
// and first error encoding/csv gives for the same body and field count.
//
//	go test ./ingest/telemetry -run '^$' -fuzz FuzzRowReaderMatchesEncodingCSV -fuzztime 1m
func FuzzRowReaderMatchesEncodingCSV(f *testing.F) {
	for _, seed := range []string{
		"a,b,c\n1,2,3\n", "1,2,3\r\n\r\n4,5,6", "1,2\n3,4,5\n", "\n\n1,2,3\n\r", "1,\"2\",3\n4,5,6\n",
		"1,2,3\n4,\"5\n5\",6\n7,8,9\n", "1,2,3\n4,5\"x,6\n", "1,2,3\n\"a\"b,2,3\n", "x\r", "1,2,3\r\r\n", "\"a\",2,3\r\r\n", "\"\r\r",
		"2026/08/21 08:01:40.250, 0, 146.72 W\n2026/08/21 08:01:41.250, 0, [N/A]\n",
	} {
		f.Add([]byte(seed), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, fields uint8) {
		n := int(fields%6) + 1
		want := csv.NewReader(bytes.NewReader(data))
		want.ReuseRecord, want.FieldsPerRecord = true, n
		got := newRowReader(bufio.NewReaderSize(bytes.NewReader(data), 16), n)
		for i := 0; ; i++ {
			wrec, werr := want.Read()
			grec, gline, gerr := got.Read()
			if fmt.Sprint(werr) != fmt.Sprint(gerr) {
				t.Fatalf("record %d: error %v, row reader %v", i, werr, gerr)
			}
			if werr != nil && !errors.Is(werr, csv.ErrFieldCount) {
				return // io.EOF or a parse error: both stop here
			}
			wline, _ := want.FieldPos(0)
			if !slices.Equal(wrec, grec) || wline != gline {
				t.Fatalf("record %d: %q on line %d, row reader %q on line %d", i, wrec, wline, grec, gline)
			}
			if werr != nil {
				return
			}
			if i > len(data) {
				t.Fatal("no end")
			}
		}
	})
}

// TestRowReaderReportsReadErrors: a read error reaches the caller
// (encoding/csv would parse the cut line and drop it).
func TestRowReaderReportsReadErrors(t *testing.T) {
	broken := errors.New("zip: checksum error")
	r := newRowReader(bufio.NewReader(io.MultiReader(bytes.NewReader([]byte("1,2,3\n4,5")), errReader{broken})), 3)
	rec, line, err := r.Read()
	if err != nil || !slices.Equal(rec, []string{"1", "2", "3"}) || line != 1 {
		t.Fatalf("first record: %q line %d, %v", rec, line, err)
	}
	if _, _, err := r.Read(); !errors.Is(err, broken) {
		t.Fatalf("got %v, want the read error", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
