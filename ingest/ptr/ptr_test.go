package ptr

import "testing"

func TestDeref(t *testing.T) {
	s, n := "x", int64(7)
	if Deref(&s) != "x" || Deref[string](nil) != "" || Deref(&n) != 7 || Deref[int64](nil) != 0 {
		t.Fatal("Deref does not read the value, or the zero value for nil")
	}
}
