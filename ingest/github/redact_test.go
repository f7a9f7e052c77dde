package github_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferencex/ingest/ingest/github"
)

// TestRedactURLText: credentials in URLs of a text — user information and
// the values of secret-looking query parameters — never reach a message.
func TestRedactURLText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"https://user:pw@host/x", "https://***@host/x"},
		{`Post "https://site/api/v1/invalidate?token=t0k&scope=all": EOF`, `Post "https://site/api/v1/invalidate?token=***&scope=all": EOF`},
		{"https://site/x?scope=all&secret=s3&Signature=abc#frag", "https://site/x?scope=all&secret=***&Signature=***#frag"},
		{"https://blob/x?sv=1&sig=AbC%2B&se=2", "https://blob/x?sv=1&sig=***&se=2"},
		{"https://h/x?api_key=k&X-Amz-Credential=c&password=p&authorization=a", "https://h/x?api_key=***&X-Amz-Credential=***&password=***&authorization=***"},
		{"https://h/x?access%5Ftoken=v", "https://h/x?access%5Ftoken=***"},
		{"https://u:p@h/x?token=a b", "https://***@h/x?token=*** b"},
		{"https://h/x?page=2&per_page=100", "https://h/x?page=2&per_page=100"},
		{"no url, a=b", "no url, a=b"},
	} {
		require.Equal(t, tc.want, github.RedactURLText(tc.in), tc.in)
	}
}
