package github

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	gogithub "github.com/google/go-github/v66/github"
)

// RunFilter selects the workflow runs ListRuns returns.
type RunFilter struct {
	// Workflow is the workflow file name ("run-sweep.yml") or numeric id;
	// "" lists every workflow of the repo.
	Workflow string
	// Branch keeps runs of this head branch ("" any).
	Branch string
	// Since and Until bound created_at, both inclusive; zero means open.
	Since, Until time.Time
}

// ListedRun is one workflow run of a listing.
type ListedRun struct {
	ID                                                         int64
	Attempt                                                    int
	Name, Event, Status, Conclusion, HeadSHA, HeadBranch, Path string
	CreatedAt, RunStartedAt                                    time.Time
}

// RejectedRun is an entry of a run listing that does not describe a run
// the listing can stand for: no positive id, no parseable created_at, an
// unknown status or (completed) conclusion, or not a run object at all.
type RejectedRun struct {
	// ID is the entry's id as served ("" when it has none).
	ID string `json:"id"`
	// Reason says what is wrong with it.
	Reason string `json:"reason"`
}

func (r RejectedRun) String() string {
	if r.ID == "" {
		return "entry without an id: " + r.Reason
	}
	return "entry with id " + r.ID + ": " + r.Reason
}

// RunListing is a run listing: the runs, oldest first, and the entries
// rejected, in the order served.
type RunListing struct {
	Runs     []ListedRun
	Rejected []RejectedRun
}

// runListCap is the most results the run listing serves for one filtered
// query: GitHub returns "up to 1,000 results for each search" when
// status, branch, created (and a few others) are used, while total_count
// still counts every match.
const runListCap = 1000

// maxRunPages bounds the pages of one window: past the cap there is
// nothing to read.
const maxRunPages = runListCap / listPageSize

// ListRuns lists every completed run matching f (status=completed), all
// pages, deduplicated by id, sorted oldest first (created_at, then id).
//
// A query matching more runs than the API serves (1000) is split in two
// by created_at, recursively, until every window fits; the windows'
// results are merged. Times go to the API at second precision (as
// created_at is); Since and Until are then applied exactly.
//
// An entry that does not describe a usable run (RejectedRun) fails the
// listing: a caller that queues runs must not guess one. ListRunEntries
// keeps the others and reports such entries.
func (c *Client) ListRuns(ctx context.Context, f RunFilter) ([]ListedRun, error) {
	l, err := c.ListRunEntries(ctx, f)
	if err != nil {
		return nil, err
	}
	if len(l.Rejected) > 0 {
		return nil, fmt.Errorf("list runs: malformed listing entries (%d in all), the first: %s", len(l.Rejected), l.Rejected[0])
	}
	return l.Runs, nil
}

// ListRunEntries lists the runs matching f as ListRuns does, each entry
// checked on its own: one the API served malformed is rejected (named,
// with the reason) and the others are kept.
func (c *Client) ListRunEntries(ctx context.Context, f RunFilter) (RunListing, error) {
	if f.Workflow != "" && !safeSegment(f.Workflow) {
		return RunListing{}, fmt.Errorf("workflow %q is not a workflow file name (run-sweep.yml) or id", f.Workflow)
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && f.Since.After(f.Until) {
		return RunListing{}, fmt.Errorf("runs created since %s until %s: the start is after the end",
			f.Since.UTC().Format(time.RFC3339), f.Until.UTC().Format(time.RFC3339))
	}
	l := &runLister{c: c, f: f, seen: map[int64]ListedRun{}, rejected: map[RejectedRun]bool{}}
	if f.Workflow != "" {
		l.scope = fmt.Sprintf("workflow %s of %s/%s", f.Workflow, c.owner, c.repo)
	} else {
		l.scope = fmt.Sprintf("repository %s/%s", c.owner, c.repo)
	}
	if err := l.list(ctx, window{lo: toSecond(f.Since), hi: toSecond(f.Until)}); err != nil {
		return RunListing{}, err
	}
	out := make([]ListedRun, 0, len(l.seen))
	for _, r := range l.seen {
		if (!f.Since.IsZero() && r.CreatedAt.Before(f.Since)) || (!f.Until.IsZero() && r.CreatedAt.After(f.Until)) {
			continue
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b ListedRun) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return RunListing{Runs: out, Rejected: l.order}, nil
}

// toSecond is t in UTC truncated to the second; zero stays zero.
func toSecond(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Second)
}

// window is a created_at range, both ends inclusive at second precision;
// a zero end is open.
type window struct{ lo, hi time.Time }

// created is the window as the API's created qualifier ("" for none).
func (w window) created() string {
	const layout = time.RFC3339
	switch {
	case w.lo.IsZero() && w.hi.IsZero():
		return ""
	case w.lo.IsZero():
		return "<=" + w.hi.Format(layout)
	case w.hi.IsZero():
		return ">=" + w.lo.Format(layout)
	default:
		return w.lo.Format(layout) + ".." + w.hi.Format(layout)
	}
}

func (w window) String() string {
	if c := w.created(); c != "" {
		return "created " + c
	}
	return "any time"
}

// runLister is one ListRuns call: the filter and the runs seen so far.
type runLister struct {
	c     *Client
	f     RunFilter
	scope string
	seen  map[int64]ListedRun
	// rejected holds the entries rejected so far (a split window serves
	// them again), order them as first served.
	rejected map[RejectedRun]bool
	order    []RejectedRun
}

// list reads every page of w, or splits w when it matches more runs than
// the API serves.
func (l *runLister) list(ctx context.Context, w window) error {
	var newest time.Time
	for page := 1; page != 0; {
		if page > maxRunPages {
			return fmt.Errorf("%s: list runs (%s): the listing has more than %d pages", l.scope, w, maxRunPages)
		}
		body, next, err := l.page(ctx, w, page)
		if err != nil {
			return err
		}
		for _, raw := range body.WorkflowRuns {
			r, bad := listedRun(raw)
			if bad != nil {
				if !l.rejected[*bad] {
					l.rejected[*bad] = true
					l.order = append(l.order, *bad)
				}
				continue
			}
			if r.CreatedAt.After(newest) {
				newest = r.CreatedAt
			}
			if old, ok := l.seen[r.ID]; !ok || r.Attempt > old.Attempt {
				l.seen[r.ID] = r
			}
		}
		// total_count is checked on every page: runs completing while the
		// listing is read can push a window past the cap.
		if total := body.TotalCount; total > runListCap {
			return l.split(ctx, w, newest, total)
		}
		page = next
	}
	return nil
}

// split lists w as two halves by created_at. newest is the newest
// created_at seen in w, which bounds a window open at its end; a window
// open at its start is split against the Actions epoch, its lower half
// staying open so that nothing older is lost.
func (l *runLister) split(ctx context.Context, w window, newest time.Time, total int) error {
	hi := w.hi
	if n := toSecond(newest); !n.IsZero() && (hi.IsZero() || n.Before(hi)) {
		hi = n
	}
	if hi.IsZero() {
		return fmt.Errorf("%s: list runs (%s): total_count is %d but no run was served", l.scope, w, total)
	}
	lo := w.lo
	if lo.IsZero() {
		lo = splitFloor(hi)
	}
	if hi.Sub(lo) < time.Second {
		return fmt.Errorf("%s: list runs (%s): %d runs created at %s, more than the %d the API serves for one query",
			l.scope, w, total, hi.Format(time.RFC3339), runListCap)
	}
	mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Second)
	if err := l.list(ctx, window{lo: w.lo, hi: mid}); err != nil {
		return err
	}
	return l.list(ctx, window{lo: mid.Add(time.Second), hi: w.hi})
}

// splitFloor is the reference start of a window open at its start that
// ends at hi: 2018-01-01, before GitHub Actions existed, or a year before
// hi should hi be older still.
func splitFloor(hi time.Time) time.Time {
	floor := time.Date(2018, 1, 1, 0, 0, 0, 0, time.UTC)
	if !floor.Before(hi) {
		floor = hi.AddDate(-1, 0, 0)
	}
	return floor
}

// runPage is a page of the run listing, its entries kept raw so that each
// is checked on its own.
type runPage struct {
	TotalCount   int               `json:"total_count"`
	WorkflowRuns []json.RawMessage `json:"workflow_runs"`
}

// page fetches one page of w and the number of the next (0: none).
func (l *runLister) page(ctx context.Context, w window, page int) (*runPage, int, error) {
	c := l.c
	q := url.Values{}
	q.Set("status", "completed")
	if l.f.Branch != "" {
		q.Set("branch", l.f.Branch)
	}
	if cr := w.created(); cr != "" {
		q.Set("created", cr)
	}
	q.Set("exclude_pull_requests", "true")
	q.Set("per_page", strconv.Itoa(listPageSize))
	q.Set("page", strconv.Itoa(page))
	u := fmt.Sprintf("repos/%s/%s/actions/runs?%s", c.owner, c.repo, q.Encode())
	if l.f.Workflow != "" {
		u = fmt.Sprintf("repos/%s/%s/actions/workflows/%s/runs?%s", c.owner, c.repo, url.PathEscape(l.f.Workflow), q.Encode())
	}
	var body runPage
	next := 0
	what := fmt.Sprintf("%s: list runs (%s, page %d)", l.scope, w, page)
	err := c.do(ctx, what, c.opts.RequestTimeout, func(ctx context.Context) (*http.Response, error) {
		req, err := c.gh.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		body = runPage{}
		resp, err := c.gh.Do(ctx, req, &body)
		if resp != nil {
			next = resp.NextPage
		}
		return ghResponse(resp), err
	})
	var er *gogithub.ErrorResponse
	if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound {
		if l.f.Workflow != "" {
			return nil, 0, fmt.Errorf("workflow %q not found in %s/%s (a file name under .github/workflows or a numeric id, readable with the token): %w",
				l.f.Workflow, c.owner, c.repo, err)
		}
		return nil, 0, fmt.Errorf("repository %s/%s not found (or not readable with the token): %w", c.owner, c.repo, err)
	}
	if err != nil {
		return nil, 0, err
	}
	return &body, next, nil
}

// wireListedRun is a listing entry as served; pointers tell absent or
// null from zero.
type wireListedRun struct {
	ID           *int64  `json:"id"`
	RunAttempt   int     `json:"run_attempt"`
	Name         string  `json:"name"`
	Event        string  `json:"event"`
	Status       string  `json:"status"`
	Conclusion   *string `json:"conclusion"`
	HeadSHA      string  `json:"head_sha"`
	HeadBranch   string  `json:"head_branch"`
	Path         string  `json:"path"`
	CreatedAt    *string `json:"created_at"`
	RunStartedAt *string `json:"run_started_at"`
}

// runStatuses are the statuses of a workflow run; runConclusions the
// conclusions of a completed one.
var (
	runStatuses    = []string{"completed", "in_progress", "queued", "requested", "waiting", "pending", "action_required"}
	runConclusions = []string{"success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required", "stale", "startup_failure"}
)

// listedRun reads and checks one listing entry; a malformed one is
// returned as rejected.
func listedRun(raw json.RawMessage) (ListedRun, *RejectedRun) {
	var id struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(raw, &id) // only names the entry; decoded below
	bad := func(format string, a ...any) (ListedRun, *RejectedRun) {
		name := string(id.ID)
		if name == "null" || len(name) > 40 {
			name = ""
		}
		return ListedRun{}, &RejectedRun{ID: name, Reason: fmt.Sprintf(format, a...)}
	}
	var wr wireListedRun
	if err := json.Unmarshal(raw, &wr); err != nil {
		return bad("not a run object: %v", err)
	}
	switch {
	case wr.ID == nil:
		return bad("no id")
	case *wr.ID <= 0:
		return bad("id %d is not positive", *wr.ID)
	case wr.RunAttempt < 0 || wr.RunAttempt > 32767:
		return bad("run_attempt %d is out of range (1 to 32767)", wr.RunAttempt)
	case !slices.Contains(runStatuses, wr.Status):
		return bad("status %q is not a workflow run status", wr.Status)
	}
	r := ListedRun{ID: *wr.ID, Attempt: wr.RunAttempt, Name: wr.Name, Event: wr.Event, Status: wr.Status,
		HeadSHA: wr.HeadSHA, HeadBranch: wr.HeadBranch, Path: wr.Path}
	if wr.Conclusion != nil {
		r.Conclusion = *wr.Conclusion
	}
	if r.Status == "completed" && !slices.Contains(runConclusions, r.Conclusion) {
		return bad("completed with conclusion %q, not a run conclusion", r.Conclusion)
	}
	if wr.CreatedAt == nil || *wr.CreatedAt == "" {
		return bad("no created_at")
	}
	t, err := time.Parse(time.RFC3339, *wr.CreatedAt)
	if err != nil {
		return bad("created_at %q is not an RFC 3339 time", *wr.CreatedAt)
	}
	r.CreatedAt = t.UTC()
	if wr.RunStartedAt != nil && *wr.RunStartedAt != "" {
		t, err := time.Parse(time.RFC3339, *wr.RunStartedAt)
		if err != nil {
			return bad("run_started_at %q is not an RFC 3339 time", *wr.RunStartedAt)
		}
		r.RunStartedAt = t.UTC()
	}
	return r, nil
}
