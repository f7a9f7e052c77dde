package fakegithub

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	run, ok := s.runs[id]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, s.runJSON(run, true))
}

// runJSON is a run as the API shows it; withPRs false leaves
// pull_requests empty (exclude_pull_requests).
func (s *Server) runJSON(run Run, withPRs bool) map[string]any {
	prs := []map[string]any{}
	if withPRs {
		for _, n := range run.PullRequests {
			prs = append(prs, map[string]any{"number": n, "url": fmt.Sprintf("%srepos/%s/%s/pulls/%d", s.BaseURL(), s.Owner, s.Repo, n)})
		}
	}
	m := map[string]any{
		"id": run.ID, "name": run.Name, "run_attempt": run.Attempt, "event": run.Event, "status": run.Status,
		"conclusion": run.Conclusion, "head_sha": run.HeadSHA, "head_branch": run.HeadBranch,
		"html_url":   fmt.Sprintf("https://github.com/%s/%s/actions/runs/%d", s.Owner, s.Repo, run.ID),
		"created_at": timeOrNil(run.CreatedAt), "run_started_at": timeOrNil(run.RunStartedAt),
		"pull_requests": prs,
	}
	if run.Path != "" {
		m["path"] = run.Path
	}
	if run.WorkflowID != 0 {
		m["workflow_id"] = run.WorkflowID
	}
	return m
}

func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// page reads per_page (default 30, at most 100) and page (default 1).
func (s *Server) page(r *http.Request) (perPage, pageNo int) {
	perPage, pageNo = 30, 1
	if v, err := strconv.Atoi(r.URL.Query().Get("per_page")); err == nil && v > 0 {
		perPage = min(v, 100)
	}
	s.mu.Lock()
	if s.MaxPerPage > 0 {
		perPage = min(perPage, s.MaxPerPage)
	}
	s.mu.Unlock()
	if v, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && v > 0 {
		pageNo = v
	}
	return perPage, pageNo
}

// paginate slices n items and sets the Link header.
func (s *Server) paginate(w http.ResponseWriter, r *http.Request, n int) (lo, hi int) {
	perPage, pageNo := s.page(r)
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
	lo, hi := s.paginate(w, r, len(list))
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
