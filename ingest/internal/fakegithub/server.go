package fakegithub

import (
	"encoding/json"
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
	// Path is the workflow file (".github/workflows/run-sweep.yml"); the
	// workflow runs listing addresses it by its base name.
	Path string
	// WorkflowID is the workflow's numeric id, the listing's other way to
	// address it.
	WorkflowID int64
	// Listed replaces fields of the run's entry in the runs listing as
	// served (a malformed created_at, an id of 0, a status that changed
	// since the filter was applied), as a misbehaving API would; the
	// listing's filters still see the fields above.
	Listed map[string]any
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
	// Author is the login of the user who posted it.
	Author string
}

// AppLogin is who a GitHub App installation token (GITHUB_TOKEN among
// them) posts as when the fake models one (Server.AppToken).
const AppLogin = "github-actions[bot]"

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
	// Login is the user the token belongs to ("ingest-bot" by default):
	// GET /user answers it, and comments the token posts are its.
	Login string
	// AppToken makes the token an installation token: GET /user answers
	// 403 (as GitHub does for GITHUB_TOKEN) and comments are AppLogin's.
	AppToken bool
	// MaxPerPage caps the listings' page size below GitHub's 100, so that
	// a few artifacts span several pages (0: 100).
	MaxPerPage int

	mu            sync.Mutex
	runs          map[int64]Run
	artifacts     []*Artifact
	comments      map[int][]*Comment
	nextCommentID int64
	pulls         map[string][]PullRequest
	prs           map[int]Pull
	files         map[string][]byte
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
	s := &Server{Owner: owner, Repo: name, Token: token, Login: "ingest-bot", runs: map[int64]Run{}, comments: map[int][]*Comment{},
		nextCommentID: 9000000001, pulls: map[string][]PullRequest{}, prs: map[int]Pull{}, files: map[string][]byte{}, counts: map[Route]int{}}
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

// Artifacts returns copies of the run's artifacts (as an archive's copier
// would have saved them).
func (s *Server) Artifacts(runID int64) []Artifact {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Artifact
	for _, a := range s.artifacts {
		if a.RunID == runID {
			out = append(out, *a)
		}
	}
	return out
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

// AddComment seeds a comment on an issue or pull request, posted by the
// token's own identity.
func (s *Server) AddComment(issue int, body string) int64 {
	return s.AddCommentBy(issue, s.identity(), body)
}

// AddCommentBy seeds a comment posted by author.
func (s *Server) AddCommentBy(issue int, author, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextCommentID
	s.nextCommentID++
	s.comments[issue] = append(s.comments[issue], &Comment{ID: id, Body: body, Author: author})
	return id
}

// identity is who the token posts as.
func (s *Server) identity() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.AppToken {
		return AppLogin
	}
	return s.Login
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
	// RoutePull is one pull request; RouteContents a file's contents.
	RoutePull     Route = "pull"
	RouteContents Route = "contents"
	// RouteListRuns is the repository's workflow runs listing.
	RouteListRuns Route = "list-runs"
	// RouteListWorkflowRuns is one workflow's runs listing.
	RouteListWorkflowRuns Route = "list-workflow-runs"
	// RouteUser is GET /user, the token's identity.
	RouteUser Route = "user"
)

func (s *Server) apiHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/{owner}/{repo}/actions/runs", s.api(RouteListRuns, s.listRuns))
	mux.HandleFunc("GET /repos/{owner}/{repo}/actions/workflows/{workflow}/runs", s.api(RouteListWorkflowRuns, s.listRuns))
	mux.HandleFunc("GET /repos/{owner}/{repo}/actions/runs/{id}", s.api(RouteRun, s.getRun))
	mux.HandleFunc("GET /repos/{owner}/{repo}/actions/runs/{id}/artifacts", s.api(RouteArtifacts, s.listArtifacts))
	mux.HandleFunc("GET /repos/{owner}/{repo}/actions/artifacts/{id}/zip", s.api(RouteDownload, s.downloadArtifact))
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{n}/comments", s.api(RouteListComments, s.listComments))
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{n}/comments", s.api(RouteCreateComment, s.createComment))
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/issues/comments/{id}", s.api(RouteEditComment, s.editComment))
	mux.HandleFunc("DELETE /repos/{owner}/{repo}/issues/comments/{id}", s.api(RouteDeleteComment, s.deleteComment))
	mux.HandleFunc("GET /repos/{owner}/{repo}/commits/{sha}/pulls", s.api(RoutePulls, s.listPulls))
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}", s.api(RoutePull, s.getPull))
	mux.HandleFunc("GET /repos/{owner}/{repo}/contents/{path...}", s.api(RouteContents, s.getContents))
	mux.HandleFunc("GET /user", s.api(RouteUser, s.getUser))
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
		if route != RouteUser && (r.PathValue("owner") != s.Owner || r.PathValue("repo") != s.Repo) {
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
			if f.Kind == NoLink {
				rateHeaders(w, 4999)
				h(noLinkWriter{w}, r)
				return
			}
			if f.Kind == DriftAfterPage {
				rateHeaders(w, 4999)
				h(w, r)
				id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
				s.RemoveArtifacts(id, f.Artifact)
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

// noLinkWriter drops the Link header of the response it writes.
type noLinkWriter struct{ http.ResponseWriter }

func (w noLinkWriter) WriteHeader(code int) {
	w.ResponseWriter.Header().Del("Link")
	w.ResponseWriter.WriteHeader(code)
}

func (w noLinkWriter) Write(b []byte) (int, error) {
	w.ResponseWriter.Header().Del("Link")
	return w.ResponseWriter.Write(b)
}

// getUser answers who the token is; an installation token may not ask.
func (s *Server) getUser(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	app, login := s.AppToken, s.Login
	s.mu.Unlock()
	if app {
		writeError(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"login": login, "id": 4242, "type": "User"})
}
