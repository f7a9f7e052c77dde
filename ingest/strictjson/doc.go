// Package strictjson finds what a JSON decoder would silently accept or
// rewrite: duplicate object keys (the decoder keeps one of them), NUL
// characters inside strings (raw or \u0000, which PostgreSQL text cannot
// hold) and invalid UTF-8 (raw bytes or unpaired \u surrogates, which the
// decoder replaces by U+FFFD).
//
// Check makes one pass over the bytes a reader already holds, without
// decoding values. It is not a syntax validator: on malformed JSON it stops
// and returns nil, leaving the syntax error to the decoder that runs after.
package strictjson
