package cli

import (
	"context"
	"fmt"

	"github.com/inferencex/ingest/ingest/archive"
	"github.com/inferencex/ingest/ingest/github"
)

// noArchive is the --archive value that turns the archive off.
const noArchive = "none"

// archiveOpts are the options of the commands that can read the
// project's artifact archive besides GitHub.
type archiveOpts struct {
	source *setting
	url    *setting
}

func addArchive(s *settings) *archiveOpts {
	return &archiveOpts{
		source: s.enum("source", string(github.SourceAuto), []string{string(github.SourceAuto), string(github.SourceGitHub), string(github.SourceArchive)},
			"where artifacts come from: auto (GitHub while unexpired, else the archive), github, archive (the archive alone; no token needed)", "INGEST_SOURCE"),
		url: s.archiveURL("archive", archive.Project, "the artifact archive: gs://BUCKET[/PREFIX] (anonymous, application-default credentials when refused) "+
			"or a local mirror directory; \""+noArchive+"\": none", "INGEST_ARCHIVE"),
	}
}

// archiveURL is the archive a value names ("" for none).
func archiveURL(v string) string {
	if v == noArchive {
		return ""
	}
	return v
}

// sourceOf is the --source value; with no archive, auto means github.
func (a *archiveOpts) sourceOf() (github.Source, error) {
	src, err := github.ParseSource(a.source.String())
	if err != nil {
		return "", err
	}
	if archiveURL(a.url.String()) == "" {
		if src == github.SourceArchive {
			return "", fmt.Errorf("--source archive needs an archive: --archive %s turns it off", noArchive)
		}
		return github.SourceGitHub, nil
	}
	return src, nil
}

// tokenOptional reports whether the command can go on without a GitHub
// token: the source is the archive, chosen with --source archive or by
// naming an archive (--archive, INGEST_ARCHIVE). The default archive alone
// does not make the token optional: a user who forgot the token would
// otherwise be told a recent run is "not in the archive".
func (a *archiveOpts) tokenOptional() bool {
	src, err := a.sourceOf()
	if err != nil || src == github.SourceGitHub {
		return false
	}
	return src == github.SourceArchive || a.url.given || a.url.from != ""
}

// open opens the archive (nil when none is named).
func (a *archiveOpts) open(ctx context.Context, env Env) (*archive.Archive, error) {
	return openArchive(ctx, env, a.url.String())
}

// openArchive opens the archive at url (nil when url is empty or none); a
// gs:// archive goes to the emulator STORAGE_EMULATOR_HOST names, as
// Google's client libraries do.
func openArchive(ctx context.Context, env Env, url string) (*archive.Archive, error) {
	if archiveURL(url) == "" {
		return nil, nil
	}
	arch, err := archive.Open(ctx, url, archive.Options{Endpoint: env.Getenv("STORAGE_EMULATOR_HOST")})
	if err != nil {
		return nil, fmt.Errorf("--archive: %w", err)
	}
	return arch, nil
}

// archiveURL declares an option naming an artifact archive; a scheme the
// archive cannot read (s3://) is a usage error naming why.
func (s *settings) archiveURL(name, def, usage string, envs ...string) *setting {
	return s.add(&setting{name: name, envs: envs, def: def, usage: usage, typ: "URL", check: archive.CheckScheme})
}
