package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/inferencex/ingest/ingest/archive"
	"github.com/inferencex/ingest/ingest/github"
)

// archiveOpts are the options of the commands that can read the
// project's artifact archive besides GitHub.
type archiveOpts struct {
	source *setting
	url    *setting
}

func addArchive(s *settings) *archiveOpts {
	return &archiveOpts{
		source: s.enum("source", string(github.SourceAuto), []string{string(github.SourceAuto), string(github.SourceGitHub), string(github.SourceArchive)},
			"where artifacts come from: auto (GitHub while unexpired, else the archive; the archive alone without a token), github, archive", "INGEST_SOURCE"),
		url: s.str("archive", "", "the artifact archive: gs://BUCKET[/PREFIX] (application-default credentials when found, else anonymous) or a local mirror directory; "+
			"the project's is gs://inferencemax-gha-backup", "INGEST_ARCHIVE"),
	}
}

// sourceOf is the --source value; with no archive, auto means github.
func (a *archiveOpts) sourceOf() (github.Source, error) {
	src, err := github.ParseSource(a.source.String())
	if err != nil {
		return "", err
	}
	if a.url.String() == "" {
		if src == github.SourceArchive {
			return "", errors.New("--source archive needs --archive (or INGEST_ARCHIVE)")
		}
		return github.SourceGitHub, nil
	}
	return src, nil
}

// tokenOptional reports whether the command can go on without a GitHub
// token: an archive is named and the source may be it.
func (a *archiveOpts) tokenOptional() bool {
	src, err := a.sourceOf()
	return err == nil && src != github.SourceGitHub
}

// open opens the archive (nil when none is named).
func (a *archiveOpts) open(ctx context.Context, env Env) (*archive.Archive, error) {
	return openArchive(ctx, env, a.url.String())
}

// openArchive opens the archive at url (nil when url is empty); a gs://
// archive goes to the emulator STORAGE_EMULATOR_HOST names, as Google's
// client libraries do.
func openArchive(ctx context.Context, env Env, url string) (*archive.Archive, error) {
	if url == "" {
		return nil, nil
	}
	arch, err := archive.Open(ctx, url, archive.Options{Endpoint: env.Getenv("STORAGE_EMULATOR_HOST")})
	if err != nil {
		return nil, fmt.Errorf("--archive: %w", err)
	}
	return arch, nil
}
