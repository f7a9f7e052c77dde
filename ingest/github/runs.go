package github

import (
	"context"
	"fmt"
	"net/http"
	"time"

	gogithub "github.com/google/go-github/v66/github"

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

// ListArtifacts lists every artifact of a run, all attempts, every page,
// in the API's order.
func (c *Client) ListArtifacts(ctx context.Context, runID int64) ([]schema.ArtifactListing, error) {
	var out []schema.ArtifactListing
	for page := 1; page != 0; {
		if page > maxListPages {
			return nil, fmt.Errorf("run %d: the artifact listing has more than %d pages", runID, maxListPages)
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
			return nil, err
		}
		for _, w := range body.Artifacts {
			e := schema.ArtifactListing{ID: w.ID, Name: w.Name, SizeInBytes: w.SizeInBytes, Expired: w.Expired}
			if w.Digest != nil {
				e.Digest = *w.Digest
			}
			if w.CreatedAt != nil {
				e.CreatedAt = w.CreatedAt.UTC()
			}
			out = append(out, e)
		}
		page = next
	}
	return out, nil
}
