package trace

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/inferencex/ingest/ingest/ptr"
	"github.com/inferencex/ingest/schema"
)

// shardLabels name ranks that shard one engine (they share its KV pool), so
// they are not part of an engine's identity.
var shardLabels = map[string]bool{"tp_rank": true, "pp_rank": true, "ep_rank": true, "moe_ep_rank": true}

// identityKey is a series' logical identity: its labels other than shard
// ranks; the endpoint when it has no other label. The endpoint is
// transport, not identity: two endpoints exposing one label set are two
// views of one engine.
func identityKey(s *rawSeries) string {
	if k := labelKey(s.labels, shardLabels); k != "" {
		return k
	}
	return "@" + ptr.Deref(s.endpoint)
}

// labelKey is a label set, less the skipped names, as one comparable string
// ("" when nothing is left); name and value are joined by control
// characters, so no label can forge another set's key.
func labelKey(labels map[string]string, skip map[string]bool) string {
	names := make([]string, 0, len(labels))
	for n := range labels {
		if !skip[n] {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte(1)
		b.WriteString(labels[n])
		b.WriteByte(2)
	}
	return b.String()
}

// labelsWith is a copy of labels with the given labels set.
func labelsWith(labels map[string]string, set ...[2]string) map[string]string {
	out := make(map[string]string, len(labels)+len(set))
	for k, v := range labels {
		out[k] = v
	}
	for _, kv := range set {
		out[kv[0]] = kv[1]
	}
	return out
}

// compareUTF16 orders strings as JavaScript's < does: by UTF-16 code units.
func compareUTF16(a, b string) int {
	if isASCII(a) && isASCII(b) {
		return strings.Compare(a, b)
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	return slices.Compare(ua, ub)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// jsTrim trims what JavaScript's String.prototype.trim does.
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
			return true
		}
		return r >= 0x2000 && r <= 0x200A
	})
}

// labelOrNull is the first of the labels with a non-blank value, trimmed.
func labelOrNull(labels map[string]string, names ...string) *string {
	for _, n := range names {
		if v, ok := labels[n]; ok {
			if t := jsTrim(v); t != "" {
				return &t
			}
		}
	}
	return nil
}

// engineRole is the engine's role from engine_type, else dynamo_component
// (prefill; decode or backend is decode); nil when neither names one.
func engineRole(labels map[string]string) *string {
	for _, n := range []string{"engine_type", "dynamo_component"} {
		if v := labelOrNull(labels, n); v != nil {
			switch *v {
			case "prefill":
				r := "prefill"
				return &r
			case "decode", "backend":
				r := "decode"
				return &r
			}
		}
	}
	return nil
}

var digitsOnly = regexp.MustCompile(`^[0-9]+$`)

// rankKey sorts ranks: plain digit strings by value, anything else last.
func rankKey(rank *string) float64 {
	if rank != nil && digitsOnly.MatchString(*rank) {
		v, _ := strconv.ParseFloat(*rank, 64)
		return v
	}
	return math.Inf(1)
}

func roleKey(role *string) int {
	if role == nil {
		return 2
	}
	switch *role {
	case "prefill":
		return 0
	case "decode":
		return 1
	}
	return 2
}

var hostPort = regexp.MustCompile(`^[A-Za-z0-9_]+://([^/]+)`)

// discriminator tells apart engines that would share a label: the last
// four characters of the worker id, else the endpoint's host:port (else
// the endpoint; nil when empty). preferEndpoint skips the worker id (the
// engines came from one worker).
func discriminator(labels map[string]string, endpoint string, preferEndpoint bool) *string {
	if !preferEndpoint {
		if w := labelOrNull(labels, "worker_id"); w != nil {
			if u := utf16.Encode([]rune(*w)); len(u) > 4 {
				s := string(utf16.Decode(u[len(u)-4:]))
				return &s
			}
			return w
		}
	}
	if m := hostPort.FindStringSubmatch(endpoint); m != nil {
		return &m[1]
	}
	if endpoint == "" {
		return nil
	}
	return &endpoint
}

// scrapes are samples summed by start (the sum and count of each start), in
// the order their starts were first seen: one endpoint's samples of one
// identity for the charts, a metric's for the statistics.
type scrapes struct {
	order []float64
	at    map[float64]*[2]float64 // sum, count
}

func newScrapes() *scrapes { return &scrapes{at: map[float64]*[2]float64{}} }

// means are the mean value of each start, in order.
func (s *scrapes) means() []float64 {
	out := make([]float64, len(s.order))
	for i, t := range s.order {
		a := s.at[t]
		out[i] = a[0] / a[1]
	}
	return out
}

func (s *scrapes) add(start, v float64) {
	if a, ok := s.at[start]; ok {
		a[0] += v
		a[1]++
		return
	}
	s.order = append(s.order, start)
	s.at[start] = &[2]float64{v, 1}
}

// mean is the mean over starts of their means.
func (s *scrapes) mean() float64 {
	if len(s.order) == 0 {
		return 0
	}
	total := 0.0
	for _, m := range s.means() {
		total += m
	}
	return total / float64(len(s.order))
}

func (s *scrapes) span() float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, t := range s.order {
		lo, hi = min(lo, t), max(hi, t)
	}
	if hi >= lo {
		return hi - lo
	}
	return 0
}

func (s *scrapes) points(tOf func(float64) float64) []Point {
	starts := slices.Clone(s.order)
	slices.Sort(starts)
	out := make([]Point, len(starts))
	for i, t := range starts {
		a := s.at[t]
		out[i] = Point{T: tOf(t), Value: a[0] / a[1]}
	}
	return out
}

// component is one logical engine (or summed component) of a metric.
type component struct {
	rank, role, disc *string
	order            int
	points           []Point
}

// Mirror tolerances: two endpoints whose whole-run means differ by no more
// than this (absolute for gauges, relative to the larger for rates) are
// two views of one series.
const (
	mirrorGaugeTolerance = 0.02
	mirrorRateTolerance  = 0.05
)

func looksMirrored(means []float64, gauge bool) bool {
	hi, lo := slices.Max(means), slices.Min(means)
	spread := hi - lo
	if gauge {
		return spread <= mirrorGaugeTolerance
	}
	scale := 0.0
	for _, m := range means {
		scale = max(scale, math.Abs(m))
	}
	if scale == 0 {
		return true
	}
	return spread <= mirrorRateTolerance*scale
}

type engineGroup struct {
	labels     map[string]string
	endpoints  []string
	byEndpoint map[string]*scrapes
}

// resolveComponents collapses a metric's series into its logical
// components. Series of one identity on one endpoint (phase blocks, shard
// ranks) are merged by start, their values averaged per start; one identity
// on several endpoints is one component when their means agree (the
// endpoint covering the longest span wins, then the one with more samples,
// then the first by URL), else one per endpoint. Components are ordered by
// role (prefill, decode, none), numeric rank, discriminator (root
// collation), then discovery.
func resolveComponents(ss []*rawSeries, tOf func(float64) float64, gauge bool) []component {
	var order []string
	groups := map[string]*engineGroup{}
	for _, s := range ss {
		key := identityKey(s)
		g := groups[key]
		if g == nil {
			g = &engineGroup{labels: s.labels, byEndpoint: map[string]*scrapes{}}
			groups[key] = g
			order = append(order, key)
		}
		ep := ptr.Deref(s.endpoint)
		sc := g.byEndpoint[ep]
		if sc == nil {
			sc = newScrapes()
			g.byEndpoint[ep] = sc
			g.endpoints = append(g.endpoints, ep)
		}
		for _, x := range s.samples {
			if schema.Finite(x.start) {
				sc.add(x.start, x.value)
			}
		}
	}
	var out []component
	for _, key := range order {
		g := groups[key]
		var eps []string
		for _, ep := range g.endpoints {
			if len(g.byEndpoint[ep].order) > 0 {
				eps = append(eps, ep)
			}
		}
		if len(eps) == 0 {
			continue
		}
		slices.SortStableFunc(eps, compareUTF16)
		rank := labelOrNull(g.labels, "engine", "engine_idx", "dp_rank")
		role := engineRole(g.labels)
		push := func(ep string, preferEndpoint bool) {
			out = append(out, component{rank: rank, role: role, disc: discriminator(g.labels, ep, preferEndpoint),
				order: len(out), points: g.byEndpoint[ep].points(tOf)})
		}
		if len(eps) == 1 {
			push(eps[0], false)
			continue
		}
		means := make([]float64, len(eps))
		for i, ep := range eps {
			means[i] = g.byEndpoint[ep].mean()
		}
		if !looksMirrored(means, gauge) {
			for _, ep := range eps {
				push(ep, true)
			}
			continue
		}
		best := eps[0]
		for _, ep := range eps[1:] {
			a, b := g.byEndpoint[best], g.byEndpoint[ep]
			if sa, sb := a.span(), b.span(); sb != sa {
				if sb > sa {
					best = ep
				}
				continue
			}
			if len(b.order) > len(a.order) {
				best = ep
			}
		}
		push(best, false)
	}
	col := collate.New(language.Und)
	slices.SortStableFunc(out, func(a, b component) int { return compareComponents(col, a, b) })
	return out
}

// compareComponents orders components by role, rank, discriminator (the
// root collation, as JavaScript's localeCompare) and discovery. A collator
// is not safe for concurrent use: each sort has its own.
func compareComponents(col *collate.Collator, a, b component) int {
	if d := roleKey(a.role) - roleKey(b.role); d != 0 {
		return d
	}
	if ra, rb := rankKey(a.rank), rankKey(b.rank); ra != rb {
		if ra < rb {
			return -1
		}
		return 1
	}
	if d := col.CompareString(ptr.Deref(a.disc), ptr.Deref(b.disc)); d != 0 {
		return d
	}
	return a.order - b.order
}

func componentPoints(cs []component) [][]Point {
	out := make([][]Point, len(cs))
	for i, c := range cs {
		out[i] = c.points
	}
	return out
}

// resolveLogicalEngines names each logical engine of a gauge: its role and
// rank when the engines have more than one role, else its rank, else its
// discriminator, else its position; a name two engines share gets the
// discriminator in parentheses, and any still repeated a counter.
func resolveLogicalEngines(ss []*rawSeries, tOf func(float64) float64) []EngineSeries {
	comps := resolveComponents(ss, tOf, true)
	roles := map[string]bool{}
	for _, c := range comps {
		if c.role != nil {
			roles[*c.role] = true
		}
	}
	showRole := len(roles) > 1
	bases := make([]string, len(comps))
	counts := map[string]int{}
	for i, c := range comps {
		var named *string
		if showRole && c.role != nil {
			s := *c.role
			if c.rank != nil {
				s += " " + *c.rank
			}
			named = &s
		} else {
			named = c.rank
		}
		switch {
		case named != nil:
			bases[i] = *named
		case c.disc != nil:
			bases[i] = *c.disc
		default:
			bases[i] = "#" + strconv.Itoa(i)
		}
		counts[bases[i]]++
	}
	used := map[string]bool{}
	out := make([]EngineSeries, len(comps))
	for i, c := range comps {
		label := bases[i]
		if counts[label] > 1 && c.disc != nil {
			label = label + " (" + *c.disc + ")"
		}
		cand := label
		for n := 2; used[cand]; n++ {
			cand = label + " #" + strconv.Itoa(n)
		}
		used[cand] = true
		out[i] = EngineSeries{EngineLabel: cand, Points: c.points}
	}
	return out
}

// averageAcrossEngines is the mean over engines at each instant any engine
// was scraped: each engine holds its last value until its next scrape,
// within its own first-to-last window, and sits out an instant further
// from its last scrape than its carry limit.
func averageAcrossEngines(engines []EngineSeries) []Point {
	var active [][]Point
	for _, e := range engines {
		if len(e.Points) > 0 {
			active = append(active, e.Points)
		}
	}
	switch len(active) {
	case 0:
		return []Point{}
	case 1:
		return active[0]
	}
	return stepCombine(active, unionTimeline(active), true)
}

// unionTimeline is every instant of the components, ascending, once.
func unionTimeline(comps [][]Point) []float64 {
	seen := map[float64]bool{}
	var ts []float64
	for _, ps := range comps {
		for _, p := range ps {
			if !seen[p.T] {
				seen[p.T] = true
				ts = append(ts, p.T)
			}
		}
	}
	slices.Sort(ts)
	return ts
}

// stepCombine evaluates step-held components at each instant of timeline
// and sums them (or, with mean set, averages them); an instant no
// component covers is left out.
func stepCombine(comps [][]Point, timeline []float64, mean bool) []Point {
	cursors := make([]int, len(comps))
	limits := make([]float64, len(comps))
	for i, ps := range comps {
		cursors[i] = -1
		limits[i] = carryLimit(ps)
	}
	out := []Point{}
	for _, t := range timeline {
		sum, n := 0.0, 0
		for i, ps := range comps {
			c := cursors[i]
			for c+1 < len(ps) && ps[c+1].T <= t {
				c++
			}
			cursors[i] = c
			if c < 0 || t > ps[len(ps)-1].T || t-ps[c].T > limits[i] {
				continue
			}
			sum += ps[c].Value
			n++
		}
		if n == 0 {
			continue
		}
		if mean {
			out = append(out, Point{T: t, Value: sum / float64(n)})
		} else {
			out = append(out, Point{T: t, Value: sum})
		}
	}
	return out
}

// carryLimit is how long a component's last sample stands for it: five
// times its median positive gap; unbounded with fewer than two samples or
// no positive gap.
func carryLimit(ps []Point) float64 {
	if len(ps) < 2 {
		return math.Inf(1)
	}
	var gaps []float64
	for i := 1; i < len(ps); i++ {
		if g := ps[i].T - ps[i-1].T; g > 0 {
			gaps = append(gaps, g)
		}
	}
	if len(gaps) == 0 {
		return math.Inf(1)
	}
	slices.Sort(gaps)
	return 5 * gaps[len(gaps)>>1]
}

// Grid bounds: the most ticks a summed series may have, and the slack (of
// a tick) when snapping a component's ends to the grid.
const (
	maxGridTicks = 500_000
	gridEpsilon  = 1e-6
)

// grid is the lattice summed series are evaluated on: multiples of the
// scrape cadence (in seconds) from t = 0; without a cadence, the union of
// the components' own instants.
type grid struct {
	tick float64
	ok   bool
}

// sum adds step-held components on the grid over their common span.
func (g grid) sum(comps [][]Point) []Point {
	var active [][]Point
	first, last := math.Inf(1), math.Inf(-1)
	for _, ps := range comps {
		if len(ps) > 0 {
			active = append(active, ps)
			first, last = min(first, ps[0].T), max(last, ps[len(ps)-1].T)
		}
	}
	if len(active) == 0 || !schema.Finite(first) || !schema.Finite(last) {
		return []Point{}
	}
	var timeline []float64
	if g.ok && g.tick > 0 {
		firstTick := math.Ceil(first/g.tick - gridEpsilon)
		lastTick := math.Floor(last/g.tick + gridEpsilon)
		n := lastTick - firstTick + 1
		if n < 1 || n > maxGridTicks {
			return []Point{}
		}
		timeline = make([]float64, int(n))
		for i := range timeline {
			timeline[i] = (firstTick + float64(i)) * g.tick
		}
	} else {
		timeline = unionTimeline(active)
	}
	return stepCombine(active, timeline, false)
}
