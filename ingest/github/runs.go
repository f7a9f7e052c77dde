package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/cenkalti/backoff/v5"
	gogithub "github.com/google/go-github/v66/github"
	"go.uber.org/zap"

	"github.com/inferencex/ingest/schema"
)

// Run is what the API says about one workflow run.
type Run struct {
	Meta schema.RunMeta
	// PullRequests are the numbers of the run's pull_requests (empty for a
	// push to the default branch).
	PullRequests []int
}

// GetRun fetches a workflow run's metadata.
func (c *Client) GetRun(ctx context.Context, id int64) (Run, error) {
	var wr *gogithub.WorkflowRun
	err := c.do(ctx, fmt.Sprintf("run %d: get run", id), c.opts.RequestTimeout, func(ctx context.Context) (*http.Response, error) {
		r, resp, err := c.gh.Actions.GetWorkflowRunByID(ctx, c.owner, c.repo, id)
		wr = r
		return ghResponse(resp), err
	})
	if err != nil {
		return Run{}, err
	}
	run := Run{Meta: schema.RunMeta{
		RunID:      wr.GetID(),
		RunAttempt: wr.GetRunAttempt(),
		Name:       wr.GetName(),
		Event:      wr.GetEvent(),
		Status:     wr.GetStatus(),
		Conclusion: wr.GetConclusion(),
		HeadSHA:    wr.GetHeadSHA(),
		HeadBranch: wr.GetHeadBranch(),
		HTMLURL:    wr.GetHTMLURL(),
	}}
	if t := wr.GetCreatedAt(); !t.IsZero() {
		run.Meta.CreatedAt = t.UTC()
	}
	if t := wr.GetRunStartedAt(); !t.IsZero() {
		run.Meta.RunStartedAt = t.UTC()
	}
	if run.Meta.RunID != id {
		return Run{}, fmt.Errorf("run %d: the API answered with run %d", id, run.Meta.RunID)
	}
	for _, pr := range wr.PullRequests {
		if n := pr.GetNumber(); n > 0 {
			run.PullRequests = append(run.PullRequests, n)
		}
	}
	return run, nil
}

// listPageSize is the largest page the artifact listing serves.
const listPageSize = 100

// maxListPages bounds the listing (100 000 artifacts), so a server that
// always promises a next page cannot keep the ingest forever.
const maxListPages = 1000

// wireArtifact is one artifact of the REST listing. go-github's Artifact
// has no digest, so the listing is decoded here.
type wireArtifact struct {
	ID          int64      `json:"id"`
	Name        string     `json:"name"`
	SizeInBytes int64      `json:"size_in_bytes"`
	Digest      *string    `json:"digest"`
	Expired     bool       `json:"expired"`
	CreatedAt   *time.Time `json:"created_at"`
}

type wireArtifactPage struct {
	TotalCount int            `json:"total_count"`
	Artifacts  []wireArtifact `json:"artifacts"`
}

// listTries is how often a listing that does not add up is read again.
const listTries = 3

// IncompleteListingError is an artifact listing that did not add up
// after listTries readings: the ids seen are not the total_count the API
// reports, or the total changed between pages (an artifact deleted or
// uploaded meanwhile shifts the pages, so one can fall out of view).
type IncompleteListingError struct {
	RunID      int64
	Seen       int
	TotalCount int
	Why        string
}

func (e *IncompleteListingError) Error() string {
	return fmt.Sprintf("run %d: the artifact listing is incomplete after %d readings: %s (%d distinct artifacts seen, total_count %d)",
		e.RunID, listTries, e.Why, e.Seen, e.TotalCount)
}

// ListArtifacts lists every artifact of a run, all attempts, every page,
// in the API's order. The listing is checked for completeness: the
// distinct ids seen must be the total_count every page reports. A missing
// Link header does not end it while total_count says more exist; a
// listing that does not add up is read again, and after listTries
// readings is an *IncompleteListingError — never a partial success.
func (c *Client) ListArtifacts(ctx context.Context, runID int64) ([]schema.ArtifactListing, error) {
	try := 0
	once := func() ([]schema.ArtifactListing, error) {
		try++
		out, problem, err := c.listArtifactsOnce(ctx, runID)
		switch {
		case err != nil:
			return nil, backoff.Permanent(err)
		case problem != nil:
			return nil, problem
		}
		return out, nil
	}
	notify := func(err error, _ time.Duration) {
		if problem, ok := errors.AsType[*IncompleteListingError](err); ok {
			c.log.Warn("artifact listing does not add up: listing again", zap.Int64("run", runID), zap.Int("try", try),
				zap.String("why", problem.Why), zap.Int("seen", problem.Seen), zap.Int("total_count", problem.TotalCount))
		}
	}
	out, err := backoff.Retry(ctx, once, backoff.WithBackOff(c.opts.Retry.exponential()), backoff.WithNotify(notify),
		backoff.WithMaxTries(listTries), backoff.WithMaxElapsedTime(0))
	if err != nil && ctx.Err() != nil && err == context.Cause(ctx) { // cancelled between two readings
		return nil, fmt.Errorf("run %d: list artifacts: %w", runID, err)
	}
	return out, err
}

// listArtifactsOnce reads the listing once, every page; problem says why
// it does not add up (nil when it does).
func (c *Client) listArtifactsOnce(ctx context.Context, runID int64) ([]schema.ArtifactListing, *IncompleteListingError, error) {
	var out []schema.ArtifactListing
	seen := map[int64]bool{}
	total, totalChanged := -1, false
	for page := 1; page != 0; {
		if page > maxListPages {
			return nil, nil, fmt.Errorf("run %d: the artifact listing has more than %d pages", runID, maxListPages)
		}
		u := fmt.Sprintf("repos/%s/%s/actions/runs/%d/artifacts?per_page=%d&page=%d", c.owner, c.repo, runID, listPageSize, page)
		var body wireArtifactPage
		next := 0
		err := c.do(ctx, fmt.Sprintf("run %d: list artifacts (page %d)", runID, page), c.opts.RequestTimeout, func(ctx context.Context) (*http.Response, error) {
			req, err := c.gh.NewRequest(http.MethodGet, u, nil)
			if err != nil {
				return nil, err
			}
			body = wireArtifactPage{}
			resp, err := c.gh.Do(ctx, req, &body)
			if resp != nil {
				next = resp.NextPage
			}
			return ghResponse(resp), err
		})
		if err != nil {
			return nil, nil, err
		}
		if total >= 0 && body.TotalCount != total {
			totalChanged = true
		}
		total = body.TotalCount
		for _, w := range body.Artifacts {
			e := schema.ArtifactListing{ID: w.ID, Name: w.Name, SizeInBytes: w.SizeInBytes, Expired: w.Expired}
			if w.Digest != nil {
				e.Digest = *w.Digest
			}
			if w.CreatedAt != nil {
				e.CreatedAt = w.CreatedAt.UTC()
			}
			seen[w.ID] = true
			out = append(out, e)
		}
		switch {
		case next != 0:
			page = next
		case len(body.Artifacts) > 0 && len(seen) < total:
			// No Link to a next page, yet total_count says more exist:
			// ask for it all the same (an empty page ends the listing).
			page++
		default:
			page = 0
		}
	}
	switch {
	case totalChanged:
		return out, &IncompleteListingError{RunID: runID, Seen: len(seen), TotalCount: total, Why: "total_count changed between pages"}, nil
	case len(seen) != max(total, 0):
		return out, &IncompleteListingError{RunID: runID, Seen: len(seen), TotalCount: total, Why: "the ids seen are not total_count"}, nil
	}
	return out, nil, nil
}
