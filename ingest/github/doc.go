// Package github fetches a workflow run from the GitHub REST API for the
// ingest: run metadata, the artifact listing (every page), the selection of
// the artifacts to ingest (newest unexpired upload per exact name; in reuse
// mode the changelog from the merge run), and their downloads into a local
// cache keyed by artifact id, laid out as a run tree that package source
// reads. It also finds the pull request of a run and posts (or edits) the
// ingest report comment on it.
//
// ListRuns lists a workflow's (or the repository's) completed runs for a
// backfill: every page, oldest first. The API serves at most 1000 results
// of a filtered query, so a created_at window matching more is split in
// two, recursively, until each half fits.
//
// Every request survives the real world: transient faults (5xx, timeouts,
// dropped connections) are retried with exponential backoff and jitter,
// primary and secondary rate limits are waited out as the API says
// (Retry-After, X-RateLimit-Reset) and the wait is logged, and the archive
// redirect to blob storage is followed by a client that never carries the
// token.
package github
