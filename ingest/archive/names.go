package archive

import (
	"regexp"
	"strconv"
	"strings"
)

// MetadataFile is the copier's saved GitHub listing of a run's artifacts,
// beside its zips.
const MetadataFile = "artifacts_metadata.json"

// runDirRe is a run folder: WORKFLOW_RUNID, the run id ten or more digits
// (GitHub's run ids have had ten or more for years; a shorter suffix is a
// workflow name's own number, not a run).
var runDirRe = regexp.MustCompile(`^(.+)_([0-9]{10,})$`)

// zipRe is an artifact object's file name: NAME_ARTIFACTID.zip.
var zipRe = regexp.MustCompile(`^(.+)_([0-9]+)\.zip$`)

// dateRe is a date folder.
var dateRe = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// parseRunDir reads the workflow name and run id out of a run folder's
// name.
func parseRunDir(name string) (workflow string, id int64, ok bool) {
	return nameAndID(runDirRe, name)
}

// parseZip reads the artifact name and id out of an artifact object's file
// name.
func parseZip(file string) (name string, id int64, ok bool) {
	return nameAndID(zipRe, file)
}

// nameAndID matches s against re, whose two groups are a name and a
// positive decimal id (`<name>_<id>`).
func nameAndID(re *regexp.Regexp, s string) (string, int64, bool) {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return "", 0, false
	}
	id, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil || id <= 0 {
		return "", 0, false
	}
	return m[1], id, true
}

// lastSegment is the last non-empty segment of a slash-separated prefix.
func lastSegment(p string) string {
	p = strings.TrimSuffix(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
