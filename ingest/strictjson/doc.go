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
// them in one validating pass, each worth more than 5 % of the first
// ingest against encoding/json alone (docs/performance.md, "Current
// figures").
//
// AppendQuoted and AppendCompact (encode.go) write strings and raw values
// byte for byte as encoding/json does, for the hand-written encoders of
// the ledger's artifact records and the eval samples' objects.
package strictjson
