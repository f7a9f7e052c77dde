package trace

import (
	"bytes"
	"slices"

	json "github.com/goccy/go-json"
)

// jsValue is a metadata value as JavaScript's `??` and `typeof` see it:
// present is false for an absent or null value; str holds it when it is a
// string.
type jsValue struct {
	str     string
	present bool
	isStr   bool
}

func (v *jsValue) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		*v = jsValue{}
		return nil
	}
	*v = jsValue{present: true}
	if b[0] != '"' {
		return nil
	}
	v.isStr = true
	return json.Unmarshal(b, &v.str)
}

// replayKey is the record's replay lane, as the request timeline (version
// 6) reads it: root_correlation_id when present (not null), else
// x_correlation_id; only a non-empty string is a lane.
func replayKey(root, x jsValue) (string, bool) {
	v := x
	if root.present {
		v = root
	}
	return v.str, v.isStr && v.str != ""
}

// replayLane is one correlation id and the earliest dispatch of its
// records on the timeline.
type replayLane struct {
	key   string
	first float64
}

// lane interns a record's replay lane, keeping its earliest dispatch; 0
// when the record has none.
func (p *Profile) lane(key string, dispatch float64) uint32 {
	if i, ok := p.replayIdx[key]; ok {
		l := &p.replays[i-1]
		l.first = min(l.first, dispatch)
		return i
	}
	p.replays = append(p.replays, replayLane{key: key, first: dispatch})
	i := uint32(len(p.replays))
	p.replayIdx[key] = i
	return i
}

// replayRanks numbers the lanes by their earliest dispatch, then by key
// (compared as UTF-16 code units, as JavaScript compares strings): the
// timeline's compact replay ids ("ri"), indexed by lane.
func (p *Profile) replayRanks() []uint32 {
	order := make([]int, len(p.replays))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		la, lb := p.replays[a], p.replays[b]
		switch {
		case la.first < lb.first:
			return -1
		case la.first > lb.first:
			return 1
		}
		return compareUTF16(la.key, lb.key)
	})
	ranks := make([]uint32, len(p.replays))
	for rank, lane := range order {
		ranks[lane] = uint32(rank)
	}
	return ranks
}
