package source

import (
	"encoding/json"

	"github.com/inferencex/ingest/ingest/strictjson"
)

// parseListingFast parses the common listing, one REST response page
// object, in two passes instead of parseListing's seven. It handles only
// what it is sure of: ok is false on anything else (another shape, an
// escaped string, a number that is not a plain integer, a key that
// encoding/json would match to a field only case-insensitively, any
// error) and the caller runs parseListing, which then produces the same
// listingDoc or the error, worded as ever. FuzzListingFastMatchesSlow
// holds the two to the same result.
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
	i := skipWS(list, 1)
	if i < len(list) && list[i] == ']' {
		return b.finish(), true
	}
	for i < len(list) {
		var w wireArtifact
		if i, ok = fastArtifact(list, i, &w); !ok {
			return listingDoc{}, false
		}
		if b.add(&w) != nil {
			return listingDoc{}, false
		}
		i = skipWS(list, i)
		if i >= len(list) {
			return listingDoc{}, false
		}
		switch list[i] {
		case ',':
			i = skipWS(list, i+1)
		case ']':
			return b.finish(), true
		default:
			return listingDoc{}, false
		}
	}
	return listingDoc{}, false
}

// Field names (json tags) of wirePage, wireArtifact and wireWorkflowRun.
var (
	pageFields     = []string{"total_count", "artifacts", "run"}
	artifactFields = []string{"id", "name", "created_at", "size_in_bytes", "digest", "expired", "archive_download_url", "workflow_run"}
	wfRunFields    = []string{"id", "head_branch", "head_sha"}
)

// fastArtifact decodes the artifact object whose '{' is at data[i] into w
// as encoding/json would, and returns the index after its '}'.
func fastArtifact(data []byte, i int, w *wireArtifact) (int, bool) {
	return fastObject(data, i, artifactFields, func(key string, v []byte, i int) (int, bool) {
		switch key {
		case "id":
			return intField(v, i, &w.ID)
		case "size_in_bytes":
			return intField(v, i, &w.SizeInBytes)
		case "name":
			return stringField(v, i, &w.Name)
		case "archive_download_url":
			return stringField(v, i, &w.ArchiveDownloadURL)
		case "created_at":
			return stringPtrField(v, i, &w.CreatedAt)
		case "digest":
			return stringPtrField(v, i, &w.Digest)
		case "expired":
			return boolField(v, i, &w.Expired)
		case "workflow_run":
			switch {
			case hasLiteral(v, i, "null"):
				w.WorkflowRun = nil
				return i + 4, true
			case i < len(v) && v[i] == '{':
				wr := new(wireWorkflowRun)
				w.WorkflowRun = wr
				return fastWorkflowRun(v, i, wr)
			}
		}
		return i, false
	})
}

// fastWorkflowRun decodes a workflow_run object as fastArtifact does.
func fastWorkflowRun(data []byte, i int, w *wireWorkflowRun) (int, bool) {
	return fastObject(data, i, wfRunFields, func(key string, v []byte, i int) (int, bool) {
		switch key {
		case "id":
			return intField(v, i, &w.ID)
		case "head_branch":
			return stringField(v, i, &w.HeadBranch)
		case "head_sha":
			return stringField(v, i, &w.HeadSHA)
		}
		return i, false
	})
}

// fastObject walks the object whose '{' is at data[i], in a document that
// strictjson validated (so without duplicate keys), calling field for each
// member whose key is one of fields, with the index of its value; field
// returns the index after the value. Other members are skipped, as
// encoding/json ignores unknown fields, unless their key might match a
// field case-insensitively. Escaped keys are refused.
func fastObject(data []byte, i int, fields []string, field func(key string, data []byte, i int) (int, bool)) (int, bool) {
	if i >= len(data) || data[i] != '{' {
		return i, false
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, false
		}
		end := plainStringEnd(data, i)
		if end < 0 {
			return i, false
		}
		key := data[i+1 : end-1]
		i = skipWS(data, end)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		i = skipWS(data, i+1)
		known := ""
		for _, f := range fields {
			if string(key) == f {
				known = f
				break
			}
		}
		var ok bool
		switch {
		case known != "":
			i, ok = field(known, data, i)
		case foldsToField(key, fields):
			return i, false
		default:
			i, ok = skipValue(data, i)
		}
		if !ok {
			return i, false
		}
		i = skipWS(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

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
