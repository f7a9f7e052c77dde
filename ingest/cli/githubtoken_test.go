package cli

import "testing"

// The token is looked up where gh looks: GH_TOKEN first, then
// GITHUB_TOKEN; blank values do not count.
func TestGitHubToken(t *testing.T) {
	for _, tc := range []struct {
		name       string
		gh, github string
		want       string
	}{
		{"GITHUB_TOKEN alone", "", "ghs_actions", "ghs_actions"},
		{"GH_TOKEN alone", "gho_cli", "", "gho_cli"},
		{"GH_TOKEN wins, as in gh", "gho_cli", "ghs_actions", "gho_cli"},
		{"blank GH_TOKEN falls through", "  ", "ghs_actions", "ghs_actions"},
		{"neither", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := Env{Getenv: func(k string) string {
				return map[string]string{"GH_TOKEN": tc.gh, "GITHUB_TOKEN": tc.github}[k]
			}}
			if got := githubToken(env); got != tc.want {
				t.Errorf("githubToken = %q, want %q", got, tc.want)
			}
		})
	}
}
