package github_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/github"
	"github.com/inferencex/ingest/ingest/internal/fakegithub"
)

const marker = "<!-- ingest-report source-run=77 -->"

// TestUpsertComment: the marked comment is found on any page and edited;
// without one a comment is created; another run's marker is left alone.
func TestUpsertComment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range 150 {
		e.fake.AddComment(10, "chatter "+itoa(i))
	}
	other := e.fake.AddComment(10, "<!-- ingest-report source-run=78 -->\nanother run")

	c, err := e.client.UpsertComment(t.Context(), 10, marker, marker+"\nfirst")
	require.NoError(t, err)
	require.True(t, c.Created)
	for i := range 60 {
		e.fake.AddComment(10, "more chatter "+itoa(i))
	}
	c2, err := e.client.UpsertComment(t.Context(), 10, marker, marker+"\nsecond")
	require.NoError(t, err)
	require.False(t, c2.Created)
	require.Equal(t, c.ID, c2.ID)

	var marked []fakegithub.Comment
	for _, cm := range e.fake.Comments(10) {
		if cm.ID == other {
			require.Equal(t, "<!-- ingest-report source-run=78 -->\nanother run", cm.Body)
		}
		if len(cm.Body) >= len(marker) && cm.Body[:len(marker)] == marker {
			marked = append(marked, cm)
		}
	}
	require.Len(t, marked, 1)
	require.Equal(t, marker+"\nsecond", marked[0].Body)

	// An unchanged body is not sent again.
	edits := e.fake.Count(fakegithub.RouteEditComment)
	_, err = e.client.UpsertComment(t.Context(), 10, marker, marker+"\nsecond")
	require.NoError(t, err)
	require.Equal(t, edits, e.fake.Count(fakegithub.RouteEditComment))
	e.requireNoToken(t)
}

// TestUpsertCommentRetries: a create whose answer is lost is not
// repeated, and rate limits on the comment endpoints are waited
// out; there is still exactly one comment.
func TestUpsertCommentRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.Inject(fakegithub.Fault{Route: fakegithub.RouteListComments, Kind: fakegithub.SecondaryRateLimit, Times: 1})
	e.fake.Inject(fakegithub.Fault{Route: fakegithub.RouteCreateComment, Kind: fakegithub.ServeThenFail, Times: 1})
	e.fake.Inject(fakegithub.Fault{Route: fakegithub.RouteEditComment, Kind: fakegithub.TooManyRequests, Times: 1})
	_, err := e.client.UpsertComment(t.Context(), 11, marker, marker+"\nbody")
	require.NoError(t, err)
	require.Len(t, e.fake.Comments(11), 1, "the create landed although its answer was a 502: it was not repeated")
	require.Equal(t, 1, e.fake.Count(fakegithub.RouteCreateComment))
	_, err = e.client.UpsertComment(t.Context(), 11, marker, marker+"\nedited")
	require.NoError(t, err)
	require.Len(t, e.fake.Comments(11), 1)
	require.Equal(t, marker+"\nedited", e.fake.Comments(11)[0].Body)

	// A permission error is final and says so.
	e.fake.Inject(fakegithub.Fault{Route: fakegithub.RouteEditComment, Kind: fakegithub.Status, Status: 403, Message: "Resource not accessible by integration"})
	_, err = e.client.UpsertComment(t.Context(), 11, marker, marker+"\nagain")
	require.ErrorContains(t, err, "pull request #11: post the report comment: PATCH ")
	require.ErrorContains(t, err, "403 Resource not accessible by integration")
	e.requireNoToken(t, err.Error())
}

func TestFindPR(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.SetPulls("sha1", []fakegithub.PullRequest{{Number: 5}, {Number: 6, MergeCommitSHA: "sha1", Merged: true}})
	e.fake.SetPulls("sha2", []fakegithub.PullRequest{{Number: 7}, {Number: 8, Merged: true}})
	tests := []struct {
		hints   github.PRHints
		want    int
		wantHow string
	}{
		{github.PRHints{Explicit: 1, Reuse: 2, RunPRs: []int{3}, Changelog: 4, MergeHeadSHA: "sha1"}, 1, "--pr"},
		{github.PRHints{Reuse: 2, RunPRs: []int{3}, Changelog: 4, MergeHeadSHA: "sha1"}, 2, "reuse metadata"},
		{github.PRHints{RunPRs: []int{3}, Changelog: 4, MergeHeadSHA: "sha1"}, 3, "run metadata"},
		{github.PRHints{Changelog: 4, MergeHeadSHA: "sha1"}, 4, "changelog pr-link"},
		{github.PRHints{MergeHeadSHA: "sha1"}, 6, "merge commit"},
		{github.PRHints{MergeHeadSHA: "sha2"}, 8, "merge commit"},
		{github.PRHints{MergeHeadSHA: "unknown"}, 0, ""},
		{github.PRHints{}, 0, ""},
	}
	for _, tt := range tests {
		n, how, err := e.client.FindPR(t.Context(), tt.hints)
		require.NoError(t, err)
		require.Equal(t, tt.want, n)
		require.Equal(t, tt.wantHow, how)
	}
}

// TestUpsertCommentConcurrentPoster: another ingest of the same run posts
// its comment between our look and our create; one comment remains, the
// oldest, with our body.
func TestUpsertCommentConcurrentPoster(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.Inject(fakegithub.Fault{Route: fakegithub.RouteCreateComment, Kind: fakegithub.RacingComment, Times: 1, Message: marker + "\nfrom the other ingest"})
	c, err := e.client.UpsertComment(t.Context(), 12, marker, marker+"\nours")
	require.NoError(t, err)
	all := e.fake.Comments(12)
	require.Len(t, all, 1)
	require.Equal(t, marker+"\nours", all[0].Body)
	require.Equal(t, all[0].ID, c.ID)
	require.False(t, c.Created)
	require.Equal(t, 1, e.fake.Count(fakegithub.RouteDeleteComment))

	// Two marked comments already there (left by an older tool): the
	// newer is deleted.
	first := e.fake.AddComment(13, marker+"\nold one")
	e.fake.AddComment(13, marker+"\nold two")
	c, err = e.client.UpsertComment(t.Context(), 13, marker, marker+"\nnew")
	require.NoError(t, err)
	require.Equal(t, first, c.ID)
	require.Equal(t, []fakegithub.Comment{{ID: first, Body: marker + "\nnew", Author: "ingest-bot"}}, e.fake.Comments(13))
}
