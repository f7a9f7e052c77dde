package gctarget

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// percent reads the GC percent without changing it.
func percent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

func TestApplyAndLargeHeap(t *testing.T) {
	before := percent()
	t.Cleanup(func() { debug.SetGCPercent(before) })

	debug.SetGCPercent(80)
	require.Nil(t, Apply(func(string) string { return "80" }), "GOGC set: nothing to change")
	require.Equal(t, 80, percent())
	var none *Target
	none.LargeHeap()()
	require.Equal(t, 80, percent(), "a nil Target changes nothing")

	target := Apply(func(string) string { return "" })
	require.NotNil(t, target)
	require.Equal(t, Default, percent())

	first := target.LargeHeap()
	require.Equal(t, Large, percent())
	second := target.LargeHeap()
	first()
	first() // a second call does not release the other caller's hold
	require.Equal(t, Large, percent(), "another caller still holds a large heap")
	second()
	require.Equal(t, Default, percent())
}
