package export

import (
	"encoding/binary"
	"math/bits"
)

// appendRLE appends values in Parquet's RLE/bit-packing hybrid encoding,
// using only its run-length form: a run is the varint (length << 1)
// followed by the value in bitWidth rounded up to whole bytes, little
// endian. The values written here (definition levels, dictionary indices
// of names that repeat for every sample of a series) come in long runs,
// where run-length runs are as small as any.
func appendRLE(dst []byte, values []int32, bitWidth int) []byte {
	width := (bitWidth + 7) / 8
	for i := 0; i < len(values); {
		j := i + 1
		for j < len(values) && values[j] == values[i] {
			j++
		}
		dst = binary.AppendUvarint(dst, uint64(j-i)<<1)
		v := uint32(values[i])
		for b := 0; b < width; b++ {
			dst = append(dst, byte(v>>(8*b)))
		}
		i = j
	}
	return dst
}

// bitWidth is the number of bits dictionary indices below n need (at
// least 1: some readers refuse a width of 0).
func bitWidth(n int) int {
	if n <= 1 {
		return 1
	}
	return bits.Len(uint(n - 1))
}
