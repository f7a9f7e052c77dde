// Package migrations holds the numbered golang-migrate files of the ingest
// database, embedded in the binary.
package migrations

import "embed"

// FS holds every NNNNNN_name.{up,down}.sql file of this directory.
//
//go:embed *.sql
var FS embed.FS
