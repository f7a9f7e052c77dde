package perf_test

import (
	"os"
	"testing"

	"github.com/inferencex/ingest/ingest/store/pgtest"
)

// TestMain drops the template database the tests built once they end.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
