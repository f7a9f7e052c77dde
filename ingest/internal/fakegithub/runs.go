package fakegithub

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RunListCap is the most results the workflow runs listing serves for a
// query using a filter GitHub caps (status, branch, created, event, actor,
// head_sha, check_suite_id); total_count still counts every match.
const RunListCap = 1000

// knownStatus reports whether v is a status filter GitHub accepts: a run
// status or a conclusion (action_required is both).
func knownStatus(v string) bool {
	switch v {
	case "completed", "in_progress", "queued", "requested", "waiting", "pending", "action_required",
		"success", "failure", "neutral", "cancelled", "skipped", "timed_out", "stale", "startup_failure":
		return true
	}
	return false
}

// listRuns serves the repository's runs and one workflow's runs (the
// workflow by numeric id or by the base name of its file): filtered by
// status, branch and created, newest first (created_at, then id), paginated,
// at most RunListCap results for a capped filter. A run with no Status is
// listed as completed (successfully, when it has no Conclusion either). An unknown workflow is a 404; a malformed filter a
// 422.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	status := q.Get("status")
	if status != "" && !knownStatus(status) {
		writeError(w, http.StatusUnprocessableEntity, fmt.Sprintf("Validation Failed: status %q", status))
		return
	}
	lo, hi, err := createdRange(q.Get("created"))
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed: created: "+err.Error())
		return
	}
	branch := q.Get("branch")
	wf, scoped := r.PathValue("workflow"), r.PathValue("workflow") != ""

	s.mu.Lock()
	var list []Run
	known := !scoped
	for _, run := range s.runs {
		if scoped {
			if !run.inWorkflow(wf) {
				continue
			}
			known = true
		}
		if run.Status == "" {
			run.Status = "completed"
			if run.Conclusion == "" {
				run.Conclusion = "success" // a completed run always has one
			}
		}
		c := run.CreatedAt.UTC().Truncate(time.Second)
		switch {
		case status != "" && run.Status != status && run.Conclusion != status,
			branch != "" && run.HeadBranch != branch,
			!lo.IsZero() && c.Before(lo),
			!hi.IsZero() && c.After(hi):
			continue
		}
		list = append(list, run)
	}
	s.mu.Unlock()
	if !known {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	slices.SortFunc(list, func(a, b Run) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	total := len(list)
	for _, f := range []string{"actor", "branch", "check_suite_id", "created", "event", "head_sha", "status"} {
		if q.Get(f) != "" {
			list = list[:min(len(list), RunListCap)]
			break
		}
	}
	from, to := s.paginate(w, r, len(list))
	out := []map[string]any{}
	withPRs := q.Get("exclude_pull_requests") != "true"
	for _, run := range list[from:to] {
		m := s.runJSON(run, withPRs)
		for k, v := range run.Listed {
			m[k] = v
		}
		out = append(out, m)
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": total, "workflow_runs": out})
}

// inWorkflow reports whether the run belongs to the workflow addressed by
// wf: its numeric id or its file's base name.
func (run Run) inWorkflow(wf string) bool {
	if id, err := strconv.ParseInt(wf, 10, 64); err == nil {
		return run.WorkflowID != 0 && run.WorkflowID == id
	}
	return run.Path != "" && path.Base(run.Path) == wf
}

// createdRange parses the created qualifier of GitHub's search syntax:
// A..B (either side * for open), >=A, >A, <=B, <B, or A alone. Each side
// is an RFC 3339 time or a YYYY-MM-DD date, a date standing for its whole
// UTC day. It returns inclusive bounds at second precision, zero for open.
func createdRange(v string) (lo, hi time.Time, err error) {
	if v == "" {
		return lo, hi, nil
	}
	switch {
	case strings.HasPrefix(v, ">="):
		lo, _, err = parseWhen(v[2:])
	case strings.HasPrefix(v, "<="):
		_, hi, err = parseWhen(v[2:])
	case strings.HasPrefix(v, ">"):
		_, hi, err = parseWhen(v[1:])
		lo, hi = hi.Add(time.Second), time.Time{}
	case strings.HasPrefix(v, "<"):
		lo, _, err = parseWhen(v[1:])
		lo, hi = time.Time{}, lo.Add(-time.Second)
	case strings.Contains(v, ".."):
		a, b, _ := strings.Cut(v, "..")
		if a != "*" {
			if lo, _, err = parseWhen(a); err != nil {
				return lo, hi, err
			}
		}
		if b != "*" {
			_, hi, err = parseWhen(b)
		}
	default:
		lo, hi, err = parseWhen(v)
	}
	return lo, hi, err
}

// parseWhen reads an RFC 3339 time (first and last second the same) or a
// date (its first and last second).
func parseWhen(s string) (first, last time.Time, err error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		t = t.UTC().Truncate(time.Second)
		return t, t, nil
	}
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		return d, d.Add(24*time.Hour - time.Second), nil
	}
	return first, last, errors.New("not a date or RFC 3339 time: " + strconv.Quote(s))
}
