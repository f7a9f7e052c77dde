package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v66/github"
	"go.uber.org/zap"
)

// PRHints are the places a run's pull request can be learnt from, in the
// order they are tried.
type PRHints struct {
	// Explicit is --pr.
	Explicit int
	// Reuse is the reuse metadata's source_pr_number.
	Reuse int
	// RunPRs are the source run's pull_requests.
	RunPRs []int
	// Changelog is the changelog's pr-link.
	Changelog int
	// MergeHeadSHA is the merge run's head commit, whose associated pull
	// requests are asked for last.
	MergeHeadSHA string
}

// FindPR returns the pull request to comment on and where it came from;
// 0 and no error when there is none.
func (c *Client) FindPR(ctx context.Context, h PRHints) (int, string, error) {
	switch {
	case h.Explicit > 0:
		return h.Explicit, "--pr", nil
	case h.Reuse > 0:
		return h.Reuse, "reuse metadata", nil
	case len(h.RunPRs) > 0:
		return h.RunPRs[0], "run metadata", nil
	case h.Changelog > 0:
		return h.Changelog, "changelog pr-link", nil
	case h.MergeHeadSHA == "":
		return 0, "", nil
	}
	var prs []*gogithub.PullRequest
	err := c.do(ctx, "commit "+h.MergeHeadSHA+": list pull requests", c.opts.RequestTimeout, func(ctx context.Context) (*http.Response, error) {
		p, resp, err := c.gh.PullRequests.ListPullRequestsWithCommit(ctx, c.owner, c.repo, h.MergeHeadSHA, &gogithub.ListOptions{PerPage: 100})
		prs = p
		return ghResponse(resp), err
	})
	if err != nil {
		return 0, "", err
	}
	// Prefer the pull request that was merged as this commit.
	for _, pr := range prs {
		if pr.GetMergeCommitSHA() == h.MergeHeadSHA && pr.GetNumber() > 0 {
			return pr.GetNumber(), "merge commit", nil
		}
	}
	for _, pr := range prs {
		if pr.MergedAt != nil && pr.GetNumber() > 0 {
			return pr.GetNumber(), "merge commit", nil
		}
	}
	if len(prs) > 0 && prs[0].GetNumber() > 0 {
		return prs[0].GetNumber(), "merge commit", nil
	}
	return 0, "", nil
}

// Comment is a posted report comment.
type Comment struct {
	ID      int64
	URL     string
	Created bool // false: an existing comment was edited
}

// commentPageSize is the largest page of the comment listing.
const commentPageSize = 100

// Identity is the login the token posts comments as: GET /user, or, when
// the API refuses it to the token (an installation token such as
// GITHUB_TOKEN answers 403), Options.CommentAuthor.
func (c *Client) Identity(ctx context.Context) (string, error) {
	var login string
	err := c.do(ctx, "identify the token (GET /user)", c.opts.RequestTimeout, func(ctx context.Context) (*http.Response, error) {
		u, resp, err := c.gh.Users.Get(ctx, "")
		if r := ghResponse(resp); err != nil && r != nil && (r.StatusCode == http.StatusForbidden || r.StatusCode == http.StatusNotFound) &&
			classify(r, err, time.Now()).verdict == permanent {
			login = c.opts.CommentAuthor
			return nil, nil
		}
		if err != nil {
			return ghResponse(resp), err
		}
		login = u.GetLogin()
		return nil, nil
	})
	if err != nil {
		return "", err
	}
	if login == "" {
		return "", errors.New("identify the token (GET /user): no login in the answer")
	}
	return login, nil
}

// UpsertComment posts body on pull request pr, or edits the comment whose
// body starts with marker (every page is searched) and that the token's own
// identity (Identity) posted: a comment planted by anyone else with the
// marker is left alone. body must start with
// marker. One report comment per marker remains: when several exist (a
// concurrent ingest of the same run posted at the same moment) the oldest
// is kept and the others deleted. A create that fails transiently is
// never blindly repeated: the comments are listed again first, so a
// create that landed despite the error is edited instead.
func (c *Client) UpsertComment(ctx context.Context, pr int, marker, body string) (Comment, error) {
	if marker == "" || !strings.HasPrefix(body, marker) {
		return Comment{}, errors.New("report comment: the body does not start with its marker")
	}
	self, err := c.Identity(ctx)
	if err != nil {
		return Comment{}, err
	}
	var out Comment
	what := fmt.Sprintf("pull request #%d: post the report comment", pr)
	err = c.do(ctx, what, c.opts.RequestTimeout, func(ctx context.Context) (*http.Response, error) {
		marked, resp, err := c.findComments(ctx, pr, marker, self)
		if err != nil {
			return resp, err
		}
		created := false
		if len(marked) == 0 {
			cr, r, err := c.gh.Issues.CreateComment(ctx, c.owner, c.repo, pr, &gogithub.IssueComment{Body: gogithub.String(body)})
			if err != nil {
				return ghResponse(r), err
			}
			created = true
			// Look again: a concurrent ingest may have posted too.
			if marked, _, err = c.findComments(ctx, pr, marker, self); err != nil || len(marked) == 0 {
				out = Comment{ID: cr.GetID(), URL: cr.GetHTMLURL(), Created: true}
				return nil, nil
			}
		}
		kept, r, err := c.settle(ctx, pr, marked, body)
		if err != nil {
			return r, err
		}
		out = Comment{ID: kept.GetID(), URL: kept.GetHTMLURL(), Created: created && len(marked) == 1}
		return nil, nil
	})
	if err != nil {
		return Comment{}, err
	}
	c.log.Info("report comment posted", zap.Int("pr", pr), zap.Int64("comment_id", out.ID), zap.Bool("created", out.Created))
	return out, nil
}

// settle keeps the oldest of the marked comments, with body, and deletes
// the others.
func (c *Client) settle(ctx context.Context, pr int, marked []*gogithub.IssueComment, body string) (*gogithub.IssueComment, *http.Response, error) {
	kept := marked[0]
	if kept.GetBody() != body {
		ed, r, err := c.gh.Issues.EditComment(ctx, c.owner, c.repo, kept.GetID(), &gogithub.IssueComment{Body: gogithub.String(body)})
		if err != nil {
			return nil, ghResponse(r), err
		}
		kept = ed
	}
	for _, extra := range marked[1:] {
		c.log.Warn("more than one report comment for this run: deleting the newer", zap.Int("pr", pr),
			zap.Int64("kept", kept.GetID()), zap.Int64("deleted", extra.GetID()))
		if r, err := c.gh.Issues.DeleteComment(ctx, c.owner, c.repo, extra.GetID()); err != nil {
			return nil, ghResponse(r), err
		}
	}
	return kept, nil, nil
}

// findComments lists every page of a pull request's comments and returns
// those whose first line is marker and whose author is self, oldest
// (smallest id) first.
func (c *Client) findComments(ctx context.Context, pr int, marker, self string) ([]*gogithub.IssueComment, *http.Response, error) {
	var found []*gogithub.IssueComment
	opts := &gogithub.IssueListCommentsOptions{ListOptions: gogithub.ListOptions{PerPage: commentPageSize}}
	for {
		page, resp, err := c.gh.Issues.ListComments(ctx, c.owner, c.repo, pr, opts)
		if err != nil {
			return nil, ghResponse(resp), err
		}
		for _, cm := range page {
			if !hasMarker(cm.GetBody(), marker) {
				continue
			}
			if author := cm.GetUser().GetLogin(); !strings.EqualFold(author, self) {
				c.log.Warn("a comment carries the report marker but is not ours: left alone", zap.Int("pr", pr),
					zap.Int64("comment_id", cm.GetID()), zap.String("author", author), zap.String("self", self))
				continue
			}
			found = append(found, cm)
		}
		if resp.NextPage == 0 {
			slices.SortFunc(found, func(a, b *gogithub.IssueComment) int { return cmp.Compare(a.GetID(), b.GetID()) })
			return found, nil, nil
		}
		opts.Page = resp.NextPage
	}
}

// hasMarker reports whether body's first line is marker.
func hasMarker(body, marker string) bool {
	first, _, _ := strings.Cut(body, "\n")
	return strings.TrimSpace(first) == strings.TrimSpace(marker)
}
