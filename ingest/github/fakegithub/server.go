package fakegithub

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Run is a workflow run the fake knows.
type Run struct {
	ID           int64
	Attempt      int
	Name         string
	Event        string
	Status       string
	Conclusion   string
	HeadSHA      string
	HeadBranch   string
	CreatedAt    time.Time
	RunStartedAt time.Time
	PullRequests []int
}

// Artifact is an uploaded artifact of a run.
type Artifact struct {
	ID        int64
	RunID     int64
	Name      string
	CreatedAt time.Time
	Expired   bool
	// Data is the zip served for the artifact.
	Data []byte
	// NoDigest leaves digest out of the listing (as older uploads do).
	NoDigest bool
}

// Comment is an issue comment.
type Comment struct {
	ID   int64
	Body string
}

// PullRequest is what the commit → pulls endpoint returns.
type PullRequest struct {
	Number         int
	MergeCommitSHA string
	Merged         bool
}

// Server is the fake API and its blob storage.
type Server struct {
	// API is the REST API; its URL plus "/" is the client's base URL.
	API *httptest.Server
	// Blob is the storage the archive download redirects to.
	Blob *httptest.Server
	// Owner and Repo is the one repository served.
	Owner, Repo string
	// Token is the one accepted bearer token.
	Token string

	mu            sync.Mutex
	runs          map[int64]Run
	artifacts     []*Artifact
	comments      map[int][]*Comment
	nextCommentID int64
	pulls         map[string][]PullRequest
	faults        []*faultState
	counts        map[Route]int
	blobAuth      int
	authHeaders   []string
}

// New starts a fake serving owner/repo that accepts token. Both servers
// close when the test ends.
func New(t testing.TB, repo, token string) *Server {
	t.Helper()
	owner, name, _ := strings.Cut(repo, "/")
	s := &Server{Owner: owner, Repo: name, Token: token, runs: map[int64]Run{}, comments: map[int][]*Comment{},
		nextCommentID: 9000000001, pulls: map[string][]PullRequest{}, counts: map[Route]int{}}
	api := s.apiHandler()
	// GitHub Enterprise Server answers under /api/v3: so does the fake.
	s.API = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/api/v3/"); ok {
			r2 := r.Clone(r.Context())
			r2.URL.Path, r2.URL.RawPath = "/"+rest, ""
			api.ServeHTTP(w, r2)
			return
		}
		api.ServeHTTP(w, r)
	}))
	s.Blob = httptest.NewServer(http.HandlerFunc(s.serveBlob))
	t.Cleanup(func() {
		s.API.Close()
		s.Blob.Close()
	})
	return s
}

// BaseURL is the API base URL for a client.
func (s *Server) BaseURL() string { return s.API.URL + "/" }

// AddRun registers a run.
func (s *Server) AddRun(r Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[r.ID] = r
}

// AddArtifact registers an artifact of a run.
func (s *Server) AddArtifact(a Artifact) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := a
	s.artifacts = append(s.artifacts, &c)
}

// SetExpired marks every artifact of the run named name as expired or not.
func (s *Server) SetExpired(runID int64, name string, expired bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.artifacts {
		if a.RunID == runID && (name == "" || a.Name == name) {
			a.Expired = expired
		}
	}
}

// RemoveArtifacts drops every artifact of the run named name ("" all).
func (s *Server) RemoveArtifacts(runID int64, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.artifacts = slices.DeleteFunc(s.artifacts, func(a *Artifact) bool {
		return a.RunID == runID && (name == "" || a.Name == name)
	})
}

// AddComment seeds a comment on an issue or pull request.
func (s *Server) AddComment(issue int, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextCommentID
	s.nextCommentID++
	s.comments[issue] = append(s.comments[issue], &Comment{ID: id, Body: body})
	return id
}

// Comments returns a copy of an issue's comments, oldest first.
func (s *Server) Comments(issue int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments[issue] {
		out = append(out, *c)
	}
	return out
}

// SetPulls sets the pull requests associated with a commit.
func (s *Server) SetPulls(sha string, prs []PullRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pulls[sha] = prs
}

// Count is the number of requests a route received, faulted ones included.
func (s *Server) Count(r Route) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[r]
}

// BlobAuthAttempts is the number of blob requests that carried an
// Authorization header (each was refused).
func (s *Server) BlobAuthAttempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blobAuth
}

// BadAuthHeaders are the Authorization values of refused API requests.
func (s *Server) BadAuthHeaders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.authHeaders)
}

// Route names an endpoint, for faults and counts.
type Route string

// Routes.
const (
	RouteRun           Route = "run"
	RouteArtifacts     Route = "artifacts"
	RouteDownload      Route = "download"
	RouteBlob          Route = "blob"
	RouteListComments  Route = "list-comments"
	RouteCreateComment Route = "create-comment"
	RouteEditComment   Route = "edit-comment"
	RouteDeleteComment Route = "delete-comment"
	RoutePulls         Route = "pulls"
)

func (s *Server) apiHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/{owner}/{repo}/actions/runs/{id}", s.api(RouteRun, s.getRun))
	mux.HandleFunc("GET /repos/{owner}/{repo}/actions/runs/{id}/artifacts", s.api(RouteArtifacts, s.listArtifacts))
	mux.HandleFunc("GET /repos/{owner}/{repo}/actions/artifacts/{id}/zip", s.api(RouteDownload, s.downloadArtifact))
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{n}/comments", s.api(RouteListComments, s.listComments))
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{n}/comments", s.api(RouteCreateComment, s.createComment))
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/issues/comments/{id}", s.api(RouteEditComment, s.editComment))
	mux.HandleFunc("DELETE /repos/{owner}/{repo}/issues/comments/{id}", s.api(RouteDeleteComment, s.deleteComment))
	mux.HandleFunc("GET /repos/{owner}/{repo}/commits/{sha}/pulls", s.api(RoutePulls, s.listPulls))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "Not Found")
	})
	return mux
}

// api wraps an endpoint: count, authenticate, check the repository,
// apply an injected fault, then serve.
func (s *Server) api(route Route, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.counts[route]++
		s.mu.Unlock()
		if got := r.Header.Get("Authorization"); got != "Bearer "+s.Token {
			s.mu.Lock()
			s.authHeaders = append(s.authHeaders, got)
			s.mu.Unlock()
			writeError(w, http.StatusUnauthorized, "Bad credentials")
			return
		}
		if r.PathValue("owner") != s.Owner || r.PathValue("repo") != s.Repo {
			writeError(w, http.StatusNotFound, "Not Found")
			return
		}
		if f := s.fault(route, s.artifactNameOf(route, r)); f != nil {
			if f.Kind == RacingComment {
				n, _ := strconv.Atoi(r.PathValue("n"))
				s.AddComment(n, f.Message)
				rateHeaders(w, 4999)
				h(w, r)
				return
			}
			if f.Kind == ServeThenFail {
				h(httptest.NewRecorder(), r)
				writeError(w, http.StatusBadGateway, "Bad Gateway")
				return
			}
			if s.applyFault(w, r, f, nil) {
				return
			}
		}
		rateHeaders(w, 4999)
		h(w, r)
	}
}

// artifactNameOf names the artifact a download request is for.
func (s *Server) artifactNameOf(route Route, r *http.Request) string {
	if route != RouteDownload && route != RouteBlob {
		return ""
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if a := s.artifact(id); a != nil {
		return a.Name
	}
	return ""
}

func (s *Server) artifact(id int64) *Artifact {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.artifacts {
		if a.ID == id {
			return a
		}
	}
	return nil
}

func rateHeaders(w http.ResponseWriter, remaining int) {
	w.Header().Set("X-RateLimit-Limit", "5000")
	w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
	w.Header().Set("X-RateLimit-Resource", "core")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"message": msg, "documentation_url": "https://docs.github.com/rest"})
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	run, ok := s.runs[id]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	prs := []map[string]any{}
	for _, n := range run.PullRequests {
		prs = append(prs, map[string]any{"number": n, "url": fmt.Sprintf("%srepos/%s/%s/pulls/%d", s.BaseURL(), s.Owner, s.Repo, n)})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": run.ID, "name": run.Name, "run_attempt": run.Attempt, "event": run.Event, "status": run.Status,
		"conclusion": run.Conclusion, "head_sha": run.HeadSHA, "head_branch": run.HeadBranch,
		"html_url":   fmt.Sprintf("https://github.com/%s/%s/actions/runs/%d", s.Owner, s.Repo, run.ID),
		"created_at": timeOrNil(run.CreatedAt), "run_started_at": timeOrNil(run.RunStartedAt),
		"pull_requests": prs,
	})
}

func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// page reads per_page (default 30, at most 100) and page (default 1).
func page(r *http.Request) (perPage, pageNo int) {
	perPage, pageNo = 30, 1
	if v, err := strconv.Atoi(r.URL.Query().Get("per_page")); err == nil && v > 0 {
		perPage = min(v, 100)
	}
	if v, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && v > 0 {
		pageNo = v
	}
	return perPage, pageNo
}

// paginate slices n items and sets the Link header.
func paginate(w http.ResponseWriter, r *http.Request, n int) (lo, hi int) {
	perPage, pageNo := page(r)
	last := max(1, (n+perPage-1)/perPage)
	link := func(p int, rel string) string {
		u := *r.URL
		u.Scheme, u.Host = "http", r.Host
		if strings.HasPrefix(r.RequestURI, "/api/v3/") {
			u.Path = "/api/v3" + u.Path
		}
		q := u.Query()
		q.Set("per_page", strconv.Itoa(perPage))
		q.Set("page", strconv.Itoa(p))
		u.RawQuery = q.Encode()
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	var links []string
	if pageNo < last {
		links = append(links, link(pageNo+1, "next"), link(last, "last"))
	}
	if pageNo > 1 {
		links = append(links, link(1, "first"), link(pageNo-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	lo = min(n, (pageNo-1)*perPage)
	return lo, min(n, lo+perPage)
}

func (s *Server) listArtifacts(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	_, ok := s.runs[id]
	var list []*Artifact
	for _, a := range s.artifacts {
		if a.RunID == id {
			list = append(list, a)
		}
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	lo, hi := paginate(w, r, len(list))
	out := []map[string]any{}
	for _, a := range list[lo:hi] {
		m := map[string]any{
			"id": a.ID, "node_id": fmt.Sprintf("MDg6QXJ0aWZhY3Q%d", a.ID), "name": a.Name,
			"size_in_bytes": len(a.Data), "expired": a.Expired,
			"url":                  fmt.Sprintf("%srepos/%s/%s/actions/artifacts/%d", s.BaseURL(), s.Owner, s.Repo, a.ID),
			"archive_download_url": fmt.Sprintf("%srepos/%s/%s/actions/artifacts/%d/zip", s.BaseURL(), s.Owner, s.Repo, a.ID),
			"created_at":           timeOrNil(a.CreatedAt), "updated_at": timeOrNil(a.CreatedAt),
			"expires_at":   timeOrNil(a.CreatedAt.Add(90 * 24 * time.Hour)),
			"workflow_run": map[string]any{"id": a.RunID},
		}
		if !a.NoDigest {
			sum := sha256.Sum256(a.Data)
			m["digest"] = "sha256:" + hex.EncodeToString(sum[:])
		}
		out = append(out, m)
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(list), "artifacts": out})
}

func (s *Server) downloadArtifact(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	a := s.artifact(id)
	switch {
	case a == nil:
		writeError(w, http.StatusNotFound, "Not Found")
	case a.Expired:
		writeError(w, http.StatusGone, "Artifact has expired")
	default:
		w.Header().Set("Location", fmt.Sprintf("%s/blob/%d?sv=2025-01-01&sig=signed-%d", s.Blob.URL, id, id))
		w.WriteHeader(http.StatusFound)
	}
}

// serveBlob is the storage behind the redirect: it refuses credentials
// (as blob storage does when a client leaks the API token to it).
func (s *Server) serveBlob(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.counts[RouteBlob]++
	s.mu.Unlock()
	if r.Header.Get("Authorization") != "" {
		s.mu.Lock()
		s.blobAuth++
		s.mu.Unlock()
		http.Error(w, "AuthenticationFailed: authorization header not allowed with a signed URL", http.StatusForbidden)
		return
	}
	idStr, ok := strings.CutPrefix(r.URL.Path, "/blob/")
	id, err := strconv.ParseInt(idStr, 10, 64)
	a := s.artifact(id)
	if !ok || err != nil || a == nil || r.URL.Query().Get("sig") != fmt.Sprintf("signed-%d", id) {
		http.Error(w, "BlobNotFound", http.StatusNotFound)
		return
	}
	if f := s.fault(RouteBlob, a.Name); f != nil {
		if s.applyFault(w, r, f, a.Data) {
			return
		}
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Length", strconv.Itoa(len(a.Data)))
	w.Write(a.Data)
}

func (s *Server) listComments(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	s.mu.Lock()
	all := slices.Clone(s.comments[n])
	s.mu.Unlock()
	lo, hi := paginate(w, r, len(all))
	out := []map[string]any{}
	for _, c := range all[lo:hi] {
		out = append(out, s.commentJSON(n, c))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) commentJSON(issue int, c *Comment) map[string]any {
	return map[string]any{"id": c.ID, "body": c.Body,
		"html_url": fmt.Sprintf("https://github.com/%s/%s/pull/%d#issuecomment-%d", s.Owner, s.Repo, issue, c.ID)}
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	var in struct {
		Body *string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == nil {
		writeError(w, http.StatusUnprocessableEntity, "Invalid request: body is required")
		return
	}
	s.mu.Lock()
	c := &Comment{ID: s.nextCommentID, Body: *in.Body}
	s.nextCommentID++
	s.comments[n] = append(s.comments[n], c)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, s.commentJSON(n, c))
}

func (s *Server) editComment(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var in struct {
		Body *string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == nil {
		writeError(w, http.StatusUnprocessableEntity, "Invalid request: body is required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for issue, list := range s.comments {
		for _, c := range list {
			if c.ID == id {
				c.Body = *in.Body
				writeJSON(w, http.StatusOK, s.commentJSON(issue, c))
				return
			}
		}
	}
	writeError(w, http.StatusNotFound, "Not Found")
}

func (s *Server) deleteComment(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	for issue, list := range s.comments {
		for i, c := range list {
			if c.ID == id {
				s.comments[issue] = slices.Delete(list, i, i+1)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
	}
	writeError(w, http.StatusNotFound, "Not Found")
}

func (s *Server) listPulls(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	prs := slices.Clone(s.pulls[r.PathValue("sha")])
	s.mu.Unlock()
	out := []map[string]any{}
	for _, p := range prs {
		m := map[string]any{"number": p.Number, "state": "closed", "merge_commit_sha": p.MergeCommitSHA,
			"html_url": fmt.Sprintf("https://github.com/%s/%s/pull/%d", s.Owner, s.Repo, p.Number)}
		if p.Merged {
			m["merged_at"] = "2026-11-20T07:00:00Z"
		}
		out = append(out, m)
	}
	writeJSON(w, http.StatusOK, out)
}
