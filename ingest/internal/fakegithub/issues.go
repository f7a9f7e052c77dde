package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"
)

func (s *Server) listComments(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	s.mu.Lock()
	all := slices.Clone(s.comments[n])
	s.mu.Unlock()
	lo, hi := s.paginate(w, r, len(all))
	out := []map[string]any{}
	for _, c := range all[lo:hi] {
		out = append(out, s.commentJSON(n, c))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) commentJSON(issue int, c *Comment) map[string]any {
	return map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.Author},
		"html_url": fmt.Sprintf("https://github.com/%s/%s/pull/%d#issuecomment-%d", s.Owner, s.Repo, issue, c.ID)}
}

// MaxCommentLength is GitHub's limit on a comment body, in characters:
// a longer create or edit is refused with 422.
const MaxCommentLength = 65536

// commentBody reads the body of a create or edit request; it answers 422
// and reports false when there is none.
func commentBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	var in struct {
		Body *string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == nil {
		writeError(w, http.StatusUnprocessableEntity, "Invalid request: body is required")
		return "", false
	}
	if utf8.RuneCountInString(*in.Body) > MaxCommentLength {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed: body is too long (maximum is 65536 characters)")
		return "", false
	}
	return *in.Body, true
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	body, ok := commentBody(w, r)
	if !ok {
		return
	}
	author := s.identity()
	s.mu.Lock()
	c := &Comment{ID: s.nextCommentID, Body: body, Author: author}
	s.nextCommentID++
	s.comments[n] = append(s.comments[n], c)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, s.commentJSON(n, c))
}

func (s *Server) editComment(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	body, ok := commentBody(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for issue, list := range s.comments {
		for _, c := range list {
			if c.ID == id {
				c.Body = body
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
