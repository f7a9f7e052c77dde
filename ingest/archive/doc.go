// Package archive reads the project's artifact archive: the bucket a
// scheduled job copies every workflow run's artifact zips into, which keeps
// them after GitHub's 90-day retention deletes them.
//
// Objects are named DATE/WORKFLOW_RUNID/artifacts/NAME_ARTIFACTID.zip
// (DATE is YYYY-MM-DD, RUNID has ten or more digits), with an optional
// artifacts_metadata.json beside the zips when the copier saved GitHub's
// listing of the run. The same layout is read from a bucket (gs://, through
// cloud.google.com/go/storage) or from a local mirror of it (a directory,
// as `gsutil -m rsync` leaves it).
//
// Every object is verified against the size, CRC32C and MD5 the store
// gives before it is placed in the cache: a mismatch is that artifact's
// failure, never a partial file in the cache.
package archive
