package source

import "slices"

// Absent returns the names the listing holds that are not in the tree,
// sorted, in two groups: expired (every listed upload of the name has
// expired, so it can no longer be downloaded) and missing (an upload of the
// name is still downloadable, yet the tree lacks it). A tree without a
// listing has neither.
func (t *Tree) Absent() (expired, missing []string) {
	live := make(map[string]bool, len(t.Listing))
	for _, e := range t.Listing {
		live[e.Name] = live[e.Name] || !e.Expired
	}
	for name, isLive := range live {
		if t.Artifact(name) != nil {
			continue
		}
		if isLive {
			missing = append(missing, name)
		} else {
			expired = append(expired, name)
		}
	}
	slices.Sort(expired)
	slices.Sort(missing)
	return expired, missing
}
