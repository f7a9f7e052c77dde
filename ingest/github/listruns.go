package github

import (
	"cmp"
	"context"
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
func (c *Client) ListRuns(ctx context.Context, f RunFilter) ([]ListedRun, error) {
	if f.Workflow != "" && !safeSegment(f.Workflow) {
		return nil, fmt.Errorf("workflow %q is not a workflow file name (run-sweep.yml) or id", f.Workflow)
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && f.Since.After(f.Until) {
		return nil, fmt.Errorf("runs created since %s until %s: the start is after the end",
			f.Since.UTC().Format(time.RFC3339), f.Until.UTC().Format(time.RFC3339))
	}
	l := &runLister{c: c, f: f, seen: map[int64]ListedRun{}}
	if f.Workflow != "" {
		l.scope = fmt.Sprintf("workflow %s of %s/%s", f.Workflow, c.owner, c.repo)
	} else {
		l.scope = fmt.Sprintf("repository %s/%s", c.owner, c.repo)
	}
	if err := l.list(ctx, window{lo: toSecond(f.Since), hi: toSecond(f.Until)}); err != nil {
		return nil, err
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
	return out, nil
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
		for _, wr := range body.WorkflowRuns {
			r := listedRun(wr)
			if r.CreatedAt.After(newest) {
				newest = r.CreatedAt
			}
			if old, ok := l.seen[r.ID]; !ok || r.Attempt > old.Attempt {
				l.seen[r.ID] = r
			}
		}
		// total_count is checked on every page: runs completing while the
		// listing is read can push a window past the cap.
		if total := body.GetTotalCount(); total > runListCap {
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

// page fetches one page of w and the number of the next (0: none).
func (l *runLister) page(ctx context.Context, w window, page int) (*gogithub.WorkflowRuns, int, error) {
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
	var body gogithub.WorkflowRuns
	next := 0
	what := fmt.Sprintf("%s: list runs (%s, page %d)", l.scope, w, page)
	err := c.do(ctx, what, c.opts.RequestTimeout, func(ctx context.Context) (*http.Response, error) {
		req, err := c.gh.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		body = gogithub.WorkflowRuns{}
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

// listedRun converts the API's run.
func listedRun(wr *gogithub.WorkflowRun) ListedRun {
	r := ListedRun{
		ID: wr.GetID(), Attempt: wr.GetRunAttempt(), Name: wr.GetName(), Event: wr.GetEvent(),
		Status: wr.GetStatus(), Conclusion: wr.GetConclusion(), HeadSHA: wr.GetHeadSHA(),
		HeadBranch: wr.GetHeadBranch(), Path: wr.GetPath(),
	}
	if t := wr.GetCreatedAt(); !t.IsZero() {
		r.CreatedAt = t.UTC()
	}
	if t := wr.GetRunStartedAt(); !t.IsZero() {
		r.RunStartedAt = t.UTC()
	}
	return r
}
