package source

import (
	"encoding/json"

	"github.com/inferencex/ingest/ingest/strictjson"
)

// parseListingFast parses the common listing, one REST response page
// object, with strictjson's validating pass and its splitters (Elements,
// Split) instead of parseListing's seven passes. It handles only what it
// is sure of: ok is false on anything else (another shape, an escaped key
// or string, a number that is not a plain integer, a key that
// encoding/json would match to a field only case-insensitively, any
// error) and the caller runs parseListing, which then produces the same
// listingDoc or the error, worded as ever. FuzzListingFastMatchesSlow
// holds the two to the same result.
//
// It is kept while it is worth more than 5 % of the first ingest against
// parseListing alone; the figure and the commands that measure it are in
// docs/performance.md, "Current figures".
func parseListingFast(data []byte, requireID bool) (listingDoc, bool) {
	var c strictjson.Checker
	members, ok := c.Members(data, nil)
	if !ok {
		return listingDoc{}, false
	}
	var (
		list []byte
		run  *wireRun
	)
	for _, m := range members {
		switch string(m.Key) {
		case "artifacts":
			list = m.Value
		case "total_count":
			n, null, ok := plainInt(m.Value)
			if !ok || !null && n < 0 {
				return listingDoc{}, false
			}
		case "run":
			switch m.Value[0] {
			case 'n':
			case '{':
				run = new(wireRun)
				if json.Unmarshal(m.Value, run) != nil {
					return listingDoc{}, false
				}
			default:
				return listingDoc{}, false
			}
		default:
			if foldsToField(m.Key, pageFields) {
				return listingDoc{}, false
			}
		}
	}
	if len(list) == 0 || list[0] != '[' {
		return listingDoc{}, false
	}
	b := newListingBuilder(requireID, countObjects(list))
	if b.addRun(run) != nil {
		return listingDoc{}, false
	}
	var fields []strictjson.Member
	for _, obj := range strictjson.Elements(list, make([][]byte, 0, countObjects(list))) {
		var w wireArtifact
		if fields, ok = fastArtifact(obj, fields[:0], &w); !ok || b.add(&w) != nil {
			return listingDoc{}, false
		}
	}
	return b.finish(), true
}

// fastArtifact decodes the artifact object obj into w as encoding/json
// would (members is a buffer for its members), refusing what it is not
// sure of: an escaped key, a value that is not a plain literal of its
// field's type, or a key that might match a field only case-insensitively.
func fastArtifact(obj []byte, members []strictjson.Member, w *wireArtifact) ([]strictjson.Member, bool) {
	if obj[0] != '{' {
		return members, false
	}
	members = strictjson.Split(obj, members)
	for _, m := range members {
		if m.KeyEscaped {
			return members, false
		}
		var ok bool
		switch v := m.Value; string(m.Key) {
		case "id":
			ok = intValue(v, &w.ID)
		case "size_in_bytes":
			ok = intValue(v, &w.SizeInBytes)
		case "name":
			ok = stringValue(v, &w.Name)
		case "archive_download_url":
			ok = stringValue(v, &w.ArchiveDownloadURL)
		case "created_at":
			ok = stringPtrValue(v, &w.CreatedAt)
		case "digest":
			ok = stringPtrValue(v, &w.Digest)
		case "expired":
			ok = boolValue(v, &w.Expired)
		case "workflow_run":
			w.WorkflowRun, ok = fastWorkflowRun(v)
		default:
			ok = !foldsToField(m.Key, artifactFields)
		}
		if !ok {
			return members, false
		}
	}
	return members, true
}

// fastWorkflowRun decodes a workflow_run value (null or an object) as
// fastArtifact does.
func fastWorkflowRun(v []byte) (*wireWorkflowRun, bool) {
	switch v[0] {
	case 'n':
		return nil, true
	case '{':
	default:
		return nil, false
	}
	w := new(wireWorkflowRun)
	for _, m := range strictjson.Split(v, nil) {
		if m.KeyEscaped {
			return nil, false
		}
		var ok bool
		switch string(m.Key) {
		case "id":
			ok = intValue(m.Value, &w.ID)
		case "head_branch":
			ok = stringValue(m.Value, &w.HeadBranch)
		case "head_sha":
			ok = stringValue(m.Value, &w.HeadSHA)
		default:
			ok = !foldsToField(m.Key, wfRunFields)
		}
		if !ok {
			return nil, false
		}
	}
	return w, true
}

// Field names (json tags) of wirePage, wireArtifact and wireWorkflowRun.
var (
	pageFields     = []string{"total_count", "artifacts", "run"}
	artifactFields = []string{"id", "name", "created_at", "size_in_bytes", "digest", "expired", "archive_download_url", "workflow_run"}
	wfRunFields    = []string{"id", "head_branch", "head_sha"}
)

// foldsToField reports whether key might name one of fields in a
// case-insensitive match: any key that is not ASCII, or that equals a
// field ignoring case, '_' and '-'. It errs on the side of true.
func foldsToField(key []byte, fields []string) bool {
	var buf [32]byte
	norm := buf[:0]
	for _, c := range key {
		switch {
		case c >= 0x80:
			return true
		case c == '_' || c == '-':
		case c >= 'A' && c <= 'Z':
			norm = append(norm, c+'a'-'A')
		default:
			norm = append(norm, c)
		}
	}
	for _, f := range fields {
		if len(norm) > len(f) {
			continue
		}
		j := 0
		for k := 0; k < len(f); k++ {
			if f[k] == '_' {
				continue
			}
			if j >= len(norm) || norm[j] != f[k] {
				j = -1
				break
			}
			j++
		}
		if j == len(norm) {
			return true
		}
	}
	return false
}
