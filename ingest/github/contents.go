package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	gogithub "github.com/google/go-github/v66/github"
)

// ReadFile is the file at p on ref through the contents API (base64
// decoded); ok is false when the API answers 404 (no such file on the ref).
// A file over the API's 1 MB content limit is an error, not an absence.
func (c *Client) ReadFile(ctx context.Context, p, ref string) (data []byte, ok bool, err error) {
	what := fmt.Sprintf("file %s on %s of %s/%s", p, ref, c.owner, c.repo)
	var fc *gogithub.RepositoryContent
	absent := false
	err = c.do(ctx, what, c.opts.RequestTimeout, func(ctx context.Context) (*http.Response, error) {
		f, _, resp, err := c.gh.Repositories.GetContents(ctx, c.owner, c.repo, p, &gogithub.RepositoryContentGetOptions{Ref: ref})
		var er *gogithub.ErrorResponse
		if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound {
			absent = true
			return ghResponse(resp), nil
		}
		fc = f
		return ghResponse(resp), err
	})
	if err != nil {
		return nil, false, err
	}
	if absent {
		return nil, false, nil
	}
	if fc == nil {
		return nil, false, fmt.Errorf("%s: a directory, not a file", what)
	}
	s, err := fc.GetContent()
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	return []byte(s), true, nil
}

// PullRequest is what the audit needs of a pull request.
type PullRequest struct {
	Number int
	// MergedAt is zero when the pull request was not merged.
	MergedAt       time.Time
	MergeCommitSHA string
}

// GetPullRequest reads pull request n of the repository.
func (c *Client) GetPullRequest(ctx context.Context, n int) (PullRequest, error) {
	var pr *gogithub.PullRequest
	err := c.do(ctx, fmt.Sprintf("pull request #%d of %s/%s", n, c.owner, c.repo), c.opts.RequestTimeout, func(ctx context.Context) (*http.Response, error) {
		p, resp, err := c.gh.PullRequests.Get(ctx, c.owner, c.repo, n)
		pr = p
		return ghResponse(resp), err
	})
	if err != nil {
		return PullRequest{}, err
	}
	out := PullRequest{Number: pr.GetNumber(), MergeCommitSHA: pr.GetMergeCommitSHA()}
	if pr.MergedAt != nil {
		out.MergedAt = pr.MergedAt.UTC()
	}
	return out, nil
}

// PRFromLink is the pull request number of a link to a pull request of
// this repository (https://HOST/OWNER/REPO/pull/N), or 0.
func (c *Client) PRFromLink(link string) int { return c.prFromLink(link) }
