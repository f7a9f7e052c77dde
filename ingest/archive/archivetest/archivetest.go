// Package archivetest serves a local archive mirror through an in-process
// Google Cloud Storage fake (fsouza/fake-gcs-server's fakestorage), which
// speaks the storage JSON and XML APIs the client library uses.
package archivetest

import (
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"

	"github.com/inferencex/ingest/ingest/archive"
)

// Serve starts a fake GCS server holding every file under mirror as an
// object of bucket (named by its path under mirror, prefixed by prefix),
// with the CRC32C and MD5 the server computes. It returns the server (to
// add or spoil objects) and the archive options that reach it; the
// archive's URL is gs://BUCKET[/PREFIX].
func Serve(t testing.TB, mirror, bucket, prefix string) (*fakestorage.Server, archive.Options) {
	t.Helper()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", NoListener: false})
	if err != nil {
		t.Fatalf("fake GCS: %v", err)
	}
	t.Cleanup(srv.Stop)
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: bucket})
	if mirror != "" {
		err = filepath.WalkDir(mirror, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			rel, err := filepath.Rel(mirror, p)
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			name := filepath.ToSlash(rel)
			if prefix != "" {
				name = prefix + "/" + name
			}
			srv.CreateObject(fakestorage.Object{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: bucket, Name: name}, Content: data})
			return nil
		})
		if err != nil {
			t.Fatalf("fake GCS: %v", err)
		}
	}
	// The client library's own requests (JSON API listings, XML API reads
	// of storage.googleapis.com) reach the server through its transport.
	return srv, archive.Options{HTTPClient: srv.HTTPClient()}
}

// Corrupting returns o with its transport flipping one byte of every
// object body whose request path ends in suffix: the bytes a reader gets
// then disagree with the checksums the store lists.
func Corrupting(o archive.Options, suffix string) archive.Options {
	base := o.HTTPClient.Transport
	o.HTTPClient = &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		resp, err := base.RoundTrip(r)
		if err != nil || r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, suffix) || resp.StatusCode != http.StatusOK {
			return resp, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if len(body) > 0 {
			body[len(body)/2] ^= 0xff
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	})}
	return o
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// OfflineEnv are the variables that keep a command off Google Cloud
// Storage: the archive is off ("none") and a gs:// archive named anyway
// goes to a port nobody listens on. Commands default to the project's
// bucket, so every test that runs one starts from these.
var OfflineEnv = map[string]string{
	"INGEST_ARCHIVE":        "none",
	"STORAGE_EMULATOR_HOST": "127.0.0.1:1",
}

// Offline is the environment get with OfflineEnv's variables for those
// it does not hold (a test that names an archive or an emulator keeps
// its own).
func Offline(get func(string) (string, bool)) func(string) string {
	return func(k string) string {
		if v, ok := get(k); ok {
			return v
		}
		return OfflineEnv[k]
	}
}
