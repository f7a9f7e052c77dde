// Package source reads the artifacts of one workflow run from a local
// directory, as `gh run download` or the Actions download step leaves it:
// one entry per artifact name, either a folder `<name>/…` or a file
// `<name>.zip` that is read in place and never extracted. An optional
// artifacts.json (or the reference's ingest-artifact-manifest.json) beside
// them holds the GitHub artifact listing, which gives every artifact its
// upload provenance (id, created_at, digest).
//
// Opening a tree reads only its root and the listing; each artifact is
// indexed on first use (Artifact.Load, or FS).
//
// Everything an artifact holds is untrusted. A zip's entry names are
// validated before anything is served, and a folder is read beneath itself
// without following links (openat2 on Linux, os.Root elsewhere) so nothing
// can escape it; hostile entries, links and other non-regular files are
// reported as Problems and never served or followed.
package source
