package trace

import (
	"bufio"
	"io"
	"slices"
	"strconv"
)

// RequestTimelineVersion is the version of the request timeline payload
// (agentic_trace_replay.request_timeline) whose shape and values this
// package writes: the dashboard recomputes a stored timeline of any other
// version from the profile blob.
const RequestTimelineVersion = 6

// timeline keeps one record for the request timeline. A record is on the
// timeline when it has a dispatch time (credit_issued_ns, else
// request_start_ns) and an end time, whatever its phase or error.
func (p *Profile) timeline(rec *record) {
	md := &rec.Metadata
	cStart := md.Credit
	if !cStart.set {
		cStart = md.Start
	}
	if !cStart.set || !md.End.set {
		return
	}
	p.originNs = min(p.originNs, cStart.f)
	p.endNs = max(p.endNs, md.End.f)
	r := req{credit: md.Credit.f, start: md.Start.f, ack: md.Ack.f, end: md.End.f}
	if !md.Credit.set {
		r.credit = md.Start.f
	}
	if !md.Start.set {
		r.start = md.Credit.f
	}
	if md.Ack.set {
		r.has |= hasAck
	}
	if key, ok := replayKey(md.RootCorrelation, md.XCorrelation); ok {
		r.replay = p.lane(key, cStart.f)
	}
	r.cid = p.nameOr(md.ConversationID)
	r.wid = p.nameOr(md.WorkerID)
	r.phase = p.nameOr(md.Phase)
	if md.TurnIndex.set {
		r.ti = md.TurnIndex.v
	}
	if md.AgentDepth.set {
		r.ad = md.AgentDepth.v
	}
	if md.SourceTraceID != nil {
		r.srcTrace, r.has = p.name(*md.SourceTraceID), r.has|hasSrcTrace
	}
	if md.SourceKind != nil {
		r.srcKind, r.has = p.name(*md.SourceKind), r.has|hasSrcKind
	}
	if md.SourceOuter.set {
		r.srcOuter, r.has = md.SourceOuter.v, r.has|hasSrcOuter
	}
	if md.SourceInner.set {
		r.srcInner, r.has = md.SourceInner.v, r.has|hasSrcInner
	}
	if md.WasCancelled {
		r.has |= isCancelled
	}
	m := &rec.Metrics
	if v, ok := val(m.TTFT); ok {
		r.ttftMs, r.has = v, r.has|hasTTFT
	}
	// Time per output token, else the inter-token latency.
	if v, ok := val(m.TPOT); ok {
		r.tpotMs, r.has = v, r.has|hasTPOT
	} else if v, ok := val(m.ITL); ok {
		r.tpotMs, r.has = v, r.has|hasTPOT
	}
	if v, ok := val(m.ISL); ok {
		r.isl, r.has = v, r.has|hasISL
	}
	if v, ok := val(m.OSL); ok {
		r.osl, r.has = v, r.has|hasOSL
	}
	p.push(r)
}

// nameOr interns s, or "unknown" when it is absent or null.
func (p *Profile) nameOr(s *string) uint32 {
	if s == nil {
		return p.name("unknown")
	}
	return p.name(*s)
}

// HasTimeline reports whether the profile has a request timeline: at least
// one record with a dispatch and an end time. Without one the payload is
// NULL, as the dashboard's own computation gives.
func (p *Profile) HasTimeline() bool { return p.Requests() > 0 }

// WriteTimeline writes the request timeline JSON, version 6:
// {version, startNs, endNs, durationS, requests: [...]}, requests ordered by
// start (stable: file order among equal starts), times as nanoseconds from
// startNs, each request's replay lane as its rank ("ri", replayRanks). Requests are encoded one at a time: the document is never held
// whole; only a 4-byte index per request is added to sort them.
func (p *Profile) WriteTimeline(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	duration := 0.0
	if p.endNs > p.originNs {
		duration = (p.endNs - p.originNs) / 1e9
	}
	b := make([]byte, 0, 512)
	b = append(b, `{"version":`...)
	b = appendNum(b, RequestTimelineVersion)
	b = append(b, `,"startNs":`...)
	b = appendNum(b, p.originNs)
	b = append(b, `,"endNs":`...)
	b = appendNum(b, p.endNs)
	b = append(b, `,"durationS":`...)
	b = appendNum(b, duration)
	b = append(b, `,"requests":[`...)
	if _, err := bw.Write(b); err != nil {
		return err
	}
	order := make([]uint32, 0, p.Requests())
	for i := range p.Requests() {
		order = append(order, uint32(i))
	}
	slices.SortStableFunc(order, func(a, c uint32) int {
		sa, sc := p.at(a).start, p.at(c).start
		switch {
		case sa < sc:
			return -1
		case sa > sc:
			return 1
		}
		return 0
	})
	ranks := p.replayRanks()
	for i, ix := range order {
		b = b[:0]
		if i > 0 {
			b = append(b, ',')
		}
		b = p.appendRequest(b, p.at(ix), ranks)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	if _, err := bw.WriteString("]}"); err != nil {
		return err
	}
	return bw.Flush()
}

func (p *Profile) at(i uint32) *req { return &p.blocks[i/reqBlock][i%reqBlock] }

// appendRequest encodes one request with the dashboard's field names, in
// its order; absent optional fields (replay lane, source fields) are left
// out, absent metrics are null.
func (p *Profile) appendRequest(b []byte, r *req, ranks []uint32) []byte {
	o := p.originNs
	b = append(b, `{"cid":`...)
	b = append(b, p.names[r.cid]...)
	if r.replay != 0 {
		b = append(b, `,"ri":`...)
		b = strconv.AppendUint(b, uint64(ranks[r.replay-1]), 10)
	}
	b = append(b, `,"ti":`...)
	b = appendNum(b, r.ti)
	if r.has&hasSrcTrace != 0 {
		b = append(b, `,"srcTrace":`...)
		b = append(b, p.names[r.srcTrace]...)
	}
	if r.has&hasSrcOuter != 0 {
		b = append(b, `,"srcOuter":`...)
		b = appendNum(b, r.srcOuter)
	}
	if r.has&hasSrcInner != 0 {
		b = append(b, `,"srcInner":`...)
		b = appendNum(b, r.srcInner)
	}
	if r.has&hasSrcKind != 0 {
		b = append(b, `,"srcKind":`...)
		b = append(b, p.names[r.srcKind]...)
	}
	b = append(b, `,"wid":`...)
	b = append(b, p.names[r.wid]...)
	b = append(b, `,"ad":`...)
	b = appendNum(b, r.ad)
	b = append(b, `,"phase":`...)
	b = append(b, p.names[r.phase]...)
	b = append(b, `,"credit":`...)
	b = appendNum(b, r.credit-o)
	b = append(b, `,"start":`...)
	b = appendNum(b, r.start-o)
	b = append(b, `,"ack":`...)
	b = appendOpt(b, r.ack-o, r.has&hasAck != 0)
	b = append(b, `,"end":`...)
	b = appendNum(b, r.end-o)
	b = append(b, `,"ttftMs":`...)
	b = appendOpt(b, r.ttftMs, r.has&hasTTFT != 0)
	b = append(b, `,"tpotMs":`...)
	b = appendOpt(b, r.tpotMs, r.has&hasTPOT != 0)
	b = append(b, `,"isl":`...)
	b = appendOpt(b, r.isl, r.has&hasISL != 0)
	b = append(b, `,"osl":`...)
	b = appendOpt(b, r.osl, r.has&hasOSL != 0)
	if r.has&isCancelled != 0 {
		b = append(b, `,"cancelled":true}`...)
	} else {
		b = append(b, `,"cancelled":false}`...)
	}
	return b
}

func appendOpt(b []byte, v float64, ok bool) []byte {
	if !ok {
		return append(b, "null"...)
	}
	return appendNum(b, v)
}
