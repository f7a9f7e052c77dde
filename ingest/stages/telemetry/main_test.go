package telemetry_test

import (
	"os"
	"testing"

	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestMain drops the shared database and the template the tests built.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
