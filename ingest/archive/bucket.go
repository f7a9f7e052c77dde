package archive

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
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

// gcsBucket is a Google Cloud Storage bucket read through its JSON API:
// two calls, a paged listing (objects.list) and a media download
// (objects.get?alt=media). Not cloud.google.com/go/storage: its gRPC
// transport, OpenTelemetry and protobuf would take the static binary past
// its size limit (figures: docs/performance.md, "Current figures").
type gcsBucket struct {
	name     string
	endpoint string // https://storage.googleapis.com, or an emulator's
	anon     *http.Client

	mu sync.Mutex
	// authed is the client with application-default credentials, built the
	// first time the bucket refuses an anonymous request (nil until then).
	authed *http.Client
	useADC bool
}

// DefaultEndpoint is Google Cloud Storage's.
const DefaultEndpoint = "https://storage.googleapis.com"

func openGCS(name string, o Options) *gcsBucket {
	g := &gcsBucket{name: name, endpoint: strings.TrimSuffix(o.Endpoint, "/"), anon: o.HTTPClient}
	if g.endpoint == "" {
		g.endpoint = DefaultEndpoint
	} else if !strings.Contains(g.endpoint, "://") {
		g.endpoint = "http://" + g.endpoint // STORAGE_EMULATOR_HOST's host:port
	}
	if g.anon == nil {
		g.anon = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	g.useADC = !o.Anonymous && o.HTTPClient == nil
	return g
}

// do sends a GET, anonymously first (the project's bucket is public);
// a 401 or 403 is tried again with application-default credentials when
// there are any.
func (g *gcsBucket) do(ctx context.Context, u string) (*http.Response, error) {
	g.mu.Lock()
	client := g.anon
	if g.authed != nil {
		client = g.authed
	}
	g.mu.Unlock()
	resp, err := get(ctx, client, u)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) || !g.useADC || client != g.anon {
		return resp, err
	}
	resp.Body.Close()
	creds, cerr := google.FindDefaultCredentials(ctx, "https://www.googleapis.com/auth/devstorage.read_only")
	if cerr != nil {
		return nil, fmt.Errorf("the bucket refuses anonymous reads (%s) and there are no application-default credentials: %w", resp.Status, cerr)
	}
	g.mu.Lock()
	g.authed = oauth2.NewClient(ctx, creds.TokenSource)
	client = g.authed
	g.mu.Unlock()
	return get(ctx, client, u)
}

func get(ctx context.Context, c *http.Client, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}

// gcsList is a page of objects.list, with the fields asked for.
type gcsList struct {
	Items []struct {
		Name   string `json:"name"`
		Size   string `json:"size"`
		CRC32C string `json:"crc32c"`
		MD5    string `json:"md5Hash"`
	} `json:"items"`
	Prefixes      []string `json:"prefixes"`
	NextPageToken string   `json:"nextPageToken"`
}

// maxListPage bounds one listing page's body (a thousand short names
// with their checksums are well under it).
const maxListPage = 16 << 20

func (g *gcsBucket) list(ctx context.Context, prefix string, delim bool) ([]object, []string, error) {
	var objs []object
	var dirs []string
	token := ""
	for {
		q := url.Values{"prefix": {prefix}, "maxResults": {"1000"}, "fields": {"items(name,size,crc32c,md5Hash),prefixes,nextPageToken"}}
		if delim {
			q.Set("delimiter", "/")
		}
		if token != "" {
			q.Set("pageToken", token)
		}
		resp, err := g.do(ctx, g.endpoint+"/storage/v1/b/"+url.PathEscape(g.name)+"/o?"+q.Encode())
		if err != nil {
			return nil, nil, fmt.Errorf("list %q: %w", prefix, err)
		}
		var page gcsList
		err = decodeJSON(resp, &page)
		if err != nil {
			return nil, nil, fmt.Errorf("list %q: %w", prefix, err)
		}
		for _, it := range page.Items {
			o := object{Name: it.Name}
			if o.Size, err = strconv.ParseInt(it.Size, 10, 64); err != nil {
				return nil, nil, fmt.Errorf("list %q: object %s: size %q", prefix, it.Name, it.Size)
			}
			if b, err := base64.StdEncoding.DecodeString(it.CRC32C); err == nil && len(b) == 4 {
				o.CRC32C, o.HasCRC = binary.BigEndian.Uint32(b), true
			}
			if b, err := base64.StdEncoding.DecodeString(it.MD5); err == nil && len(b) == md5.Size {
				o.MD5 = b
			}
			objs = append(objs, o)
		}
		dirs = append(dirs, page.Prefixes...)
		if page.NextPageToken == "" {
			return objs, dirs, nil
		}
		token = page.NextPageToken
	}
}

func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	return json.NewDecoder(io.LimitReader(resp.Body, maxListPage)).Decode(v)
}

func (g *gcsBucket) open(ctx context.Context, name string) (io.ReadCloser, error) {
	resp, err := g.do(ctx, g.endpoint+"/storage/v1/b/"+url.PathEscape(g.name)+"/o/"+url.PathEscape(name)+"?alt=media")
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("read %s: %s: %s", name, resp.Status, strings.TrimSpace(string(msg)))
	}
	return resp.Body, nil
}

func (g *gcsBucket) close() error { return nil }

// dirBucket is a local mirror: the bucket's objects as files under a
// directory. It gives sizes, no checksums.
type dirBucket struct {
	root *os.Root
	dir  string
}

func openDir(dir string) (*dirBucket, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	return &dirBucket{root: root, dir: dir}, nil
}

// linker is a bucket whose objects are local files: Download hard-links
// them into the cache instead of copying them. A mirror backfill spent
// most of its time creating and writing the cache's copies (os.CreateTemp
// was 53 % of its CPU profile; docs/performance.md).
type linker interface {
	// link makes dst a hard link to object name; an error when the file
	// system cannot (another device, no hard links).
	link(name, dst string) error
}

// link links a listed object: name is a path the mirror's own listing
// gave, of a regular file (the listing skips symbolic links).
func (d *dirBucket) link(name, dst string) error {
	return os.Link(filepath.Join(d.dir, filepath.FromSlash(name)), dst)
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
	// Google's: an emulator's URL, or its HOST:PORT (as
	// STORAGE_EMULATOR_HOST gives it, over http). A given HTTPClient is
	// used as is, without credentials.
	Endpoint   string
	HTTPClient *http.Client
	// Anonymous reads a gs:// bucket without looking for credentials.
	Anonymous bool
}
