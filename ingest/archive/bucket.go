package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
)

// object is one stored object as the store describes it.
type object struct {
	Name string
	Size int64
	// CRC32C (Castagnoli) and MD5 are the store's checksums; HasCRC is
	// false and MD5 nil when the store gives none (a local mirror).
	CRC32C uint32
	HasCRC bool
	MD5    []byte
}

// bucket is where the archive's objects are: a cloud bucket or a local
// mirror of one.
type bucket interface {
	// list returns the objects under prefix, or with delim its objects
	// and sub-prefixes (each ending in "/") one level down.
	list(ctx context.Context, prefix string, delim bool) ([]object, []string, error)
	// open reads an object.
	open(ctx context.Context, name string) (io.ReadCloser, error)
	close() error
}

// gcsBucket is a Google Cloud Storage bucket, through its client library.
type gcsBucket struct {
	client *storage.Client
	b      *storage.BucketHandle
}

// gcsFields are the attributes a listing asks for (the JSON API's
// `fields`): a page of a thousand objects stays small.
var gcsFields = []string{"Name", "Size", "CRC32C", "MD5"}

func openGCS(ctx context.Context, name string, o Options) (*gcsBucket, error) {
	var opts []option.ClientOption
	if o.Endpoint != "" {
		opts = append(opts, option.WithEndpoint(o.Endpoint))
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	if o.Anonymous || o.HTTPClient != nil {
		opts = append(opts, option.WithoutAuthentication())
	}
	client, err := storage.NewClient(ctx, opts...)
	if err != nil && !o.Anonymous && o.HTTPClient == nil {
		// No application-default credentials: a public bucket is read
		// anonymously.
		client, err = storage.NewClient(ctx, append(opts, option.WithoutAuthentication())...)
	}
	if err != nil {
		return nil, fmt.Errorf("storage client: %w", err)
	}
	return &gcsBucket{client: client, b: client.Bucket(name)}, nil
}

func (g *gcsBucket) list(ctx context.Context, prefix string, delim bool) ([]object, []string, error) {
	q := &storage.Query{Prefix: prefix}
	if delim {
		q.Delimiter = "/"
	}
	if err := q.SetAttrSelection(gcsFields); err != nil {
		return nil, nil, err
	}
	it := g.b.Objects(ctx, q)
	it.PageInfo().MaxSize = 1000
	var objs []object
	var dirs []string
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return objs, dirs, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("list %q: %w", prefix, err)
		}
		if a.Prefix != "" {
			dirs = append(dirs, a.Prefix)
			continue
		}
		objs = append(objs, object{Name: a.Name, Size: a.Size, CRC32C: a.CRC32C, HasCRC: true, MD5: a.MD5})
	}
}

func (g *gcsBucket) open(ctx context.Context, name string) (io.ReadCloser, error) {
	r, err := g.b.Object(name).NewReader(ctx)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return r, nil
}

func (g *gcsBucket) close() error { return g.client.Close() }

// dirBucket is a local mirror: the bucket's objects as files under a
// directory. It gives sizes, no checksums.
type dirBucket struct {
	root *os.Root
}

func openDir(dir string) (*dirBucket, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	return &dirBucket{root: root}, nil
}

func (d *dirBucket) list(ctx context.Context, prefix string, delim bool) ([]object, []string, error) {
	// A prefix is a folder (ending in "/") or empty in every call the
	// archive makes.
	dir := strings.TrimSuffix(prefix, "/")
	if dir == "" {
		dir = "."
	}
	var objs []object
	var dirs []string
	err := fs.WalkDir(d.root.FS(), dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p == dir {
			return nil
		}
		name := p
		if strings.HasPrefix(path.Base(p), ".") {
			// gsutil's and our own partial files.
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			if delim {
				dirs = append(dirs, name+"/")
				return fs.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		objs = append(objs, object{Name: name, Size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("mirror: list %q: %w", prefix, err)
	}
	return objs, dirs, nil
}

func (d *dirBucket) open(_ context.Context, name string) (io.ReadCloser, error) {
	f, err := d.root.Open(filepath.FromSlash(name))
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	return f, nil
}

func (d *dirBucket) close() error { return d.root.Close() }

// Options configure Open.
type Options struct {
	// Endpoint and HTTPClient point a gs:// archive at another server than
	// Google's (an emulator); STORAGE_EMULATOR_HOST does the same.
	Endpoint   string
	HTTPClient *http.Client
	// Anonymous reads a gs:// bucket without looking for credentials.
	Anonymous bool
}
