package buildid

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadTheTestBinary: a Go binary on Linux carries its build ID in an
// ELF note, which Read finds; two reads agree.
func TestReadTheTestBinary(t *testing.T) {
	a, err := Read()
	require.NoError(t, err)
	b, err := Read()
	require.NoError(t, err)
	require.Equal(t, a, b)
	require.True(t, bytes.HasPrefix(a, []byte("go-build-id:")), "%q", a)
	require.Contains(t, string(a), "/", "a Go build ID is action ID / content ID")
}

func TestGoBuildIDNote(t *testing.T) {
	note := func(namesz uint32, id string) []byte {
		var b []byte
		b = binary.LittleEndian.AppendUint32(b, namesz)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(id)))
		b = binary.LittleEndian.AppendUint32(b, 4)
		b = append(b, "Go\x00\x00"...)
		return append(b, id...)
	}
	id := "wisYBeCRh5gRNLEt1jDC/amJwAmtM1fezjua_pFmF/UhS4GCFoWdouc4JY9RXA/C76aMk9RY1u0YPT2P4AU"
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"note after other bytes", append([]byte("\x7fELF padding"), note(4, id)...), id},
		{"no note", []byte("\x7fELF nothing here"), ""},
		{"wrong name size", note(5, id), ""},
		{"id without a slash", note(4, "0123456789abcdef0123"), ""},
		{"cut short", note(4, id)[:30], ""},
		{"a false start, then the note", append(note(4, "short"), note(4, id)...), id},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, string(goBuildIDNote(tt.in)))
		})
	}
}
