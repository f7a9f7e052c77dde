package benchmarks

import (
	"fmt"
	"sort"
	"sync"
)

// identities records, for a run the ledger corrects points of, which
// point each staged identity came from: two different points of the
// artifacts that a correction would make one are refused (the reference's
// collision check), whatever order the workers read them in.
type identities struct {
	mu        sync.Mutex
	source    map[string]string // corrected identity → source identity
	backfill  map[string]string // corrected identity → backfill id, for corrected points
	collision error
}

func newIdentities() *identities {
	return &identities{source: map[string]string{}, backfill: map[string]string{}}
}

// record notes that the point read as source is staged as desired (the
// same key when no backfill applies), by backfill id ("" for none).
func (ids *identities) record(source, desired, id string) {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if id != "" {
		ids.backfill[desired] = id
	}
	prev, seen := ids.source[desired]
	if !seen {
		ids.source[desired] = source
		return
	}
	if prev == source || ids.collision != nil {
		return
	}
	pair := []string{prev, source}
	sort.Strings(pair)
	ids.collision = fmt.Errorf("benchmark point backfill %s: points %s and %s would both be stored as %s; the correction is refused",
		ids.backfill[desired], pair[0], pair[1], desired)
}

// err is the first collision found, if any.
func (ids *identities) err() error {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	return ids.collision
}
