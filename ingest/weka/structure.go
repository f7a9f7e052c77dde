package weka

import (
	"encoding/json"
	"math"
	"strings"
)

// DefaultBlockSize is the prefix-cache block size of a conversation that
// names none.
const DefaultBlockSize = 64

// rawRequest is one model request of a conversation (a normal turn, or a
// turn inside a subagent group).
type rawRequest struct {
	T       *float64  `json:"t"`
	Type    *string   `json:"type"`
	Model   *string   `json:"model"`
	In      *float64  `json:"in"`
	Out     *float64  `json:"out"`
	HashIDs []float64 `json:"hash_ids"`
	APITime *float64  `json:"api_time"`
	// a subagent group's fields
	AgentID      *string      `json:"agent_id"`
	SubagentType *string      `json:"subagent_type"`
	DurationMs   *float64     `json:"duration_ms"`
	Requests     []rawRequest `json:"requests"`
}

// Conversation is one row of the corpus.
type Conversation struct {
	ID          *string      `json:"id"`
	Models      []string     `json:"models"`
	BlockSize   *float64     `json:"block_size"`
	HashIDScope *string      `json:"hash_id_scope"`
	Requests    []rawRequest `json:"requests"`
}

func (r *rawRequest) subagent() bool { return r.Type != nil && *r.Type == "subagent" }

// Turn is one model request of the structure.
type Turn struct {
	Kind       string   `json:"kind"`
	TurnIndex  int      `json:"turnIndex"`
	RawIndex   int      `json:"rawIndex"`
	InnerIndex *int     `json:"innerIndex,omitempty"`
	StartS     *float64 `json:"startS,omitempty"`
	EndS       *float64 `json:"endS,omitempty"`
	Model      *string  `json:"model,omitempty"`
	In         float64  `json:"in"`
	Out        float64  `json:"out"`
	Cached     float64  `json:"cached"`
	Uncached   float64  `json:"uncached"`
}

// Node is a turn or a subagent group of the structure.
type Node struct {
	*Turn
	*Group
}

// MarshalJSON writes the one the node is.
func (n Node) MarshalJSON() ([]byte, error) {
	if n.Group != nil {
		return json.Marshal(n.Group)
	}
	return json.Marshal(n.Turn)
}

// Group is a subagent group and its turns.
type Group struct {
	Kind       string   `json:"kind"`
	Label      string   `json:"label"`
	AgentID    *string  `json:"agentId,omitempty"`
	RawIndex   int      `json:"rawIndex"`
	StartS     *float64 `json:"startS,omitempty"`
	EndS       *float64 `json:"endS,omitempty"`
	DurationMs *float64 `json:"durationMs,omitempty"`
	In         float64  `json:"in"`
	Out        float64  `json:"out"`
	Cached     float64  `json:"cached"`
	Uncached   float64  `json:"uncached"`
	Children   []Turn   `json:"children"`
}

// ConversationTotals are a conversation's sums.
type ConversationTotals struct {
	In                float64 `json:"in"`
	Out               float64 `json:"out"`
	Cached            float64 `json:"cached"`
	Uncached          float64 `json:"uncached"`
	NumTurns          int     `json:"numTurns"`
	NumSubagentGroups int     `json:"numSubagentGroups"`
}

// Structure is a conversation as the dataset pages draw it
// (dataset_conversations.structure): its turns and subagent groups in
// order, each request's input split into the prefix a cache of unbounded
// size would hold (cached) and the rest.
type Structure struct {
	BlockSize float64            `json:"blockSize"`
	Nodes     []Node             `json:"nodes"`
	Totals    ConversationTotals `json:"totals"`
}

// jsRound rounds half up, as JavaScript's Math.round.
func jsRound(v float64) float64 { return math.Floor(v + 0.5) }

// tokens is a token count as read: rounded, never below 0, 0 when absent.
func tokens(v *float64) float64 {
	if v == nil {
		return 0
	}
	return math.Max(0, jsRound(*v))
}

// finiteTime is a time in seconds when it is a finite number ≥ 0.
func finiteTime(v *float64) *float64 {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0 {
		return nil
	}
	x := *v
	return &x
}

func endOf(start, apiTime *float64) *float64 {
	if start == nil {
		return nil
	}
	e := *start
	if d := finiteTime(apiTime); d != nil {
		e += *d
	}
	return &e
}

// split is a request's input split by the blocks seen before it: the
// leading hash ids already in seen are cached (at most the input), and the
// request's blocks join seen.
func split(r *rawRequest, seen map[float64]struct{}, blockSize float64) (in, cached float64) {
	in = tokens(r.In)
	if len(r.HashIDs) == 0 {
		return in, 0
	}
	hits := 0
	for _, h := range r.HashIDs {
		if _, ok := seen[h]; !ok {
			break
		}
		hits++
	}
	for _, h := range r.HashIDs {
		seen[h] = struct{}{}
	}
	return in, math.Min(in, float64(hits)*blockSize)
}

// childStart is a subagent turn's start: a time before its group's start
// is relative to it (older corpora), else absolute.
func childStart(g, r *rawRequest) *float64 {
	s := finiteTime(r.T)
	if s == nil {
		return nil
	}
	if gs := finiteTime(g.T); gs != nil && *s+1e-6 < *gs {
		v := *gs + *s
		return &v
	}
	return s
}

// groupTimes are a subagent group's start (its own, else its earliest
// turn's) and end (start + duration_ms, else its latest turn's end, else
// its start).
func groupTimes(g *rawRequest) (start, end *float64) {
	start = finiteTime(g.T)
	if start == nil {
		for i := range g.Requests {
			if s := childStart(g, &g.Requests[i]); s != nil && (start == nil || *s < *start) {
				start = s
			}
		}
	}
	if d := finiteTime(g.DurationMs); start != nil && d != nil {
		e := *start + *d/1000
		return start, &e
	}
	for i := range g.Requests {
		c := &g.Requests[i]
		s := childStart(g, c)
		if s == nil {
			continue
		}
		e := *s
		if d := finiteTime(c.APITime); d != nil {
			e += *d
		}
		if end == nil || e > *end {
			end = &e
		}
	}
	if end == nil {
		end = start
	}
	return start, end
}

// Build is a conversation's structure. The main turns share one set of
// seen blocks; each subagent group starts from a copy of it at its spawn
// and does not add to it.
func (c *Conversation) Build() Structure {
	bs := float64(DefaultBlockSize)
	if c.BlockSize != nil {
		bs = *c.BlockSize
	}
	s := Structure{BlockSize: bs, Nodes: []Node{}}
	seen := map[float64]struct{}{}
	turnIndex := 0
	for idx := range c.Requests {
		e := &c.Requests[idx]
		if !e.subagent() {
			in, cached := split(e, seen, bs)
			start := finiteTime(e.T)
			t := Turn{Kind: "turn", TurnIndex: turnIndex, RawIndex: idx, StartS: start, EndS: endOf(start, e.APITime),
				Model: e.Model, In: in, Out: tokens(e.Out), Cached: cached, Uncached: in - cached}
			turnIndex++
			s.Nodes = append(s.Nodes, Node{Turn: &t})
			s.Totals.NumTurns++
			s.Totals.In += t.In
			s.Totals.Out += t.Out
			s.Totals.Cached += t.Cached
			s.Totals.Uncached += t.Uncached
			continue
		}
		g := Group{Kind: "subagent", Label: "Subagent", AgentID: e.AgentID, RawIndex: idx, DurationMs: e.DurationMs, Children: []Turn{}}
		if e.SubagentType != nil {
			if l := strings.TrimSpace(*e.SubagentType); l != "" {
				g.Label = l
			}
		}
		g.StartS, g.EndS = groupTimes(e)
		child := make(map[float64]struct{}, len(seen))
		for h := range seen {
			child[h] = struct{}{}
		}
		for inner := range e.Requests {
			r := &e.Requests[inner]
			in, cached := split(r, child, bs)
			start := childStart(e, r)
			ii := inner
			t := Turn{Kind: "turn", TurnIndex: turnIndex, RawIndex: idx, InnerIndex: &ii, StartS: start,
				EndS: endOf(start, r.APITime), Model: r.Model, In: in, Out: tokens(r.Out), Cached: cached, Uncached: in - cached}
			turnIndex++
			g.Children = append(g.Children, t)
			g.In += t.In
			g.Out += t.Out
			g.Cached += t.Cached
			g.Uncached += t.Uncached
		}
		s.Nodes = append(s.Nodes, Node{Group: &g})
		s.Totals.NumSubagentGroups++
		s.Totals.In += g.In
		s.Totals.Out += g.Out
		s.Totals.Cached += g.Cached
		s.Totals.Uncached += g.Uncached
	}
	return s
}
