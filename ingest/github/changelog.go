package github

import (
	"archive/zip"
	"encoding/json"
	"io"
	"net/url"
	"path"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// changelogFile is the file of the changelog-metadata artifact.
const changelogFile = "changelog_metadata.json"

// maxChangelogBytes bounds how much of the changelog is read for a PR link.
const maxChangelogBytes = 16 << 20

// changelogPR is the first pull request of this repository that the
// selected changelog-metadata links to (entries[].pr-link), or 0. A
// changelog that cannot be read is no PR link: the ingest reports on it.
func (c *Client) changelogPR(res *Result) int {
	zpath, ok := c.artifactZip(res, ChangelogArtifact)
	if !ok {
		return 0
	}
	zr, err := zip.OpenReader(zpath)
	if err != nil {
		c.log.Debug("changelog unreadable for a PR link", zap.Error(err))
		return 0
	}
	defer zr.Close()
	for _, f := range zr.File {
		if path.Base(f.Name) != changelogFile {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return 0
		}
		var doc struct {
			Entries []struct {
				PRLink string `json:"pr-link"`
			} `json:"entries"`
		}
		err = json.NewDecoder(io.LimitReader(rc, maxChangelogBytes)).Decode(&doc)
		rc.Close()
		if err != nil {
			c.log.Debug("changelog unreadable for a PR link", zap.Error(err))
			return 0
		}
		for _, e := range doc.Entries {
			if n := c.prFromLink(e.PRLink); n > 0 {
				return n
			}
		}
		return 0
	}
	return 0
}

// prFromLink parses https://HOST/OWNER/REPO/pull/N of this repository.
func (c *Client) prFromLink(link string) int {
	u, err := url.Parse(strings.TrimSpace(link))
	if err != nil || u.Host == "" {
		return 0
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 4 || parts[2] != "pull" || !c.sameRepo(parts[0], parts[1]) {
		return 0
	}
	n, err := strconv.Atoi(parts[3])
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
