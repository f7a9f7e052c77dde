package fakegithub

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// Pull is a pull request as GET /repos/{owner}/{repo}/pulls/{n} serves it.
type Pull struct {
	Number         int
	MergeCommitSHA string
	// MergedAt is zero for a pull request that was not merged.
	MergedAt time.Time
}

// SetFile serves data as the file at p on branch ref through the contents
// API (nil removes it: the API then answers 404).
func (s *Server) SetFile(ref, p string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := ref + "\x00" + p
	if data == nil {
		delete(s.files, key)
		return
	}
	s.files[key] = append([]byte(nil), data...)
}

// AddPull registers a pull request.
func (s *Server) AddPull(p Pull) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prs[p.Number] = p
}

// getContents answers a file as GitHub does: base64 content wrapped at 60
// characters a line, 404 when the path is absent on the ref (the
// repository's default branch "main" when no ref is given).
func (s *Server) getContents(w http.ResponseWriter, r *http.Request) {
	p := r.PathValue("path")
	ref := r.URL.Query().Get("ref")
	if ref == "" {
		ref = "main"
	}
	s.mu.Lock()
	data, ok := s.files[ref+"\x00"+p]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	enc := base64.StdEncoding.EncodeToString(data)
	var b strings.Builder
	for len(enc) > 60 {
		b.WriteString(enc[:60] + "\n")
		enc = enc[60:]
	}
	b.WriteString(enc + "\n")
	sum := sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(data))), data...))
	writeJSON(w, http.StatusOK, map[string]any{"type": "file", "encoding": "base64", "size": len(data),
		"name": path.Base(p), "path": p, "sha": hex.EncodeToString(sum[:]), "content": b.String()})
}

// getPull answers one pull request, 404 when unknown.
func (s *Server) getPull(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	s.mu.Lock()
	p, ok := s.prs[n]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	m := map[string]any{"number": p.Number, "state": "closed", "merged": !p.MergedAt.IsZero(), "merged_at": nil,
		"merge_commit_sha": p.MergeCommitSHA, "html_url": fmt.Sprintf("https://github.com/%s/%s/pull/%d", s.Owner, s.Repo, p.Number)}
	if !p.MergedAt.IsZero() {
		m["merged_at"] = p.MergedAt.UTC().Format(time.RFC3339)
	}
	writeJSON(w, http.StatusOK, m)
}
