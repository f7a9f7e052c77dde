// Package ptr reads the optional values that decoded JSON and nullable
// columns leave as pointers.
package ptr

// Deref is *p, or T's zero value when p is nil.
func Deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
