// Package strictjson finds what a JSON decoder would silently accept or
// rewrite: duplicate object keys (the decoder keeps one of them), NUL
// characters inside strings (raw or \u0000, which PostgreSQL text cannot
// hold) and invalid UTF-8 (raw bytes or unpaired \u surrogates, which the
// decoder replaces by U+FFFD).
//
// Check makes one pass over the bytes a reader already holds, without
// decoding values. It is not a syntax validator: on malformed JSON it stops
// and returns nil, leaving the syntax error to the decoder that runs after.
//
// Check is kept for safety: encoding/json (v1) resolves a duplicate key,
// keeps a NUL and replaces invalid UTF-8 without a word, and
// encoding/json/jsontext, which rejects all three, exists in Go 1.26 only
// under GOEXPERIMENT=jsonv2, which the README's build must not need. Every
// reader of untrusted JSON runs it before encoding/json decodes; their
// tests state the rejections (e.g. ingest/benchmark/strict_test.go).
//
// Members, Split, Elements and AppendString (members.go) are kept for
// speed: the eval sample lines and the artifacts.json listing are split by
// them in one validating pass. Measured on the first ingest of the
// 5000-point shape (ingest-bench -processes N -points 5000 -evals 500
// -eval-docs 5, user+system CPU of the ingest process, median), decoding
// the sample lines with encoding/json alone cost 0.45 s more (2.70 s
// against 2.25 s) and the listing 0.25 s more (1.95 s against 1.70 s,
// wall 1.21x): each well over 5 % of the ingest (docs/performance.md,
// "Own code kept and replaced").
//
// AppendQuoted and AppendCompact (encode.go) write strings and raw values
// byte for byte as encoding/json does, for the hand-written encoders of
// the ledger's artifact records and the eval samples' objects.
package strictjson
