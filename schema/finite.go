package schema

import "math"

// Finite reports whether v is a value a measurement may hold: a number,
// not NaN and not an infinity (JSON and PostgreSQL numerics have neither).
func Finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
