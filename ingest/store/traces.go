package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/schema"
)

// TraceRowLinks finds the stored rows of the given winners' content
// digests with their current trace and server log links, keyed by digest.
// One round trip.
//
// metricKeys are the numeric metrics read into each link's Metrics;
// ownedKeys are those whose non-numeric values OwnedOther reports.
func (t *RunTx) TraceRowLinks(ctx context.Context, digests [][]byte, metricKeys, ownedKeys []string) (map[string]schema.TraceRowLink, error) {
	out := make(map[string]schema.TraceRowLink, len(digests))
	if len(digests) == 0 {
		return out, nil
	}
	rows, err := t.tx.Query(ctx, qTraceRowLinks, t.run.WorkflowRunID, digests, nonNilS(metricKeys), nonNilS(ownedKeys))
	if err != nil {
		return nil, t.explain("find trace rows", err)
	}
	var d []byte
	var l schema.TraceRowLink
	dst := slices.Concat([]any{&d, &l.RowID, &l.TraceDigest, &l.ServerLogDigest, &l.TraceAdopted}, l.Config.KeyFields(),
		[]any{&l.Metrics, &l.OwnedOther})
	if _, err := pgx.ForEachRow(rows, dst, func() error {
		out[string(d)] = l
		l = schema.TraceRowLink{}
		return nil
	}); err != nil {
		return nil, t.explain("find trace rows", err)
	}
	return out, nil
}

// KnownTraceDigests reports which sidecar, server log, blob and log text
// digests are already stored. One round trip.
//
// A stored sidecar whose payloads are not of the versions v, or, among
// perSource (the sidecars of points with per-source chart series), whose
// chart has series but no per-source series, is also listed in Stale.
func (t *RunTx) KnownTraceDigests(ctx context.Context, sidecars, logs, blobs, texts [][]byte, v schema.TracePayloadVersions,
	perSource [][]byte) (schema.TraceKnown, error) {
	k := schema.TraceKnown{Sidecars: map[string]bool{}, ServerLogs: map[string]bool{}, Blobs: map[string]bool{}, Stale: map[string]bool{}, LogTexts: map[string]bool{}}
	rows, err := t.tx.Query(ctx, qKnownTraceDigests, nonNil(sidecars), nonNil(logs), nonNil(blobs),
		v.Stats, v.Chart, v.Timeline, nonNil(texts), nonNil(perSource))
	if err != nil {
		return k, t.explain("read stored trace digests", err)
	}
	var kind string
	var d []byte
	var stale bool
	_, err = pgx.ForEachRow(rows, []any{&kind, &d, &stale}, func() error {
		switch kind {
		case "s":
			k.Sidecars[string(d)] = true
			if stale {
				k.Stale[string(d)] = true
			}
		case "l":
			k.ServerLogs[string(d)] = true
		case "t":
			k.LogTexts[string(d)] = true
		default:
			k.Blobs[string(d)] = true
		}
		return nil
	})
	if err != nil {
		return k, t.explain("read stored trace digests", err)
	}
	return k, nil
}

// StageTraceChunks streams chunks into the run's trace staging table with
// one COPY; next is called until it reports no more chunks.
func (t *RunTx) StageTraceChunks(ctx context.Context, next func() (schema.TraceChunk, bool, error)) (int64, error) {
	if _, err := t.tx.Exec(ctx, qCreateTraceStaging); err != nil {
		return 0, t.explain("create trace staging table", err)
	}
	n, err := t.tx.CopyFrom(ctx, pgx.Identifier{"stage_trace_chunks"}, traceChunkColumns, &chunkSource{next: next})
	if err != nil {
		return n, t.explain("stage trace chunks", err)
	}
	return n, nil
}

type chunkSource struct {
	next func() (schema.TraceChunk, bool, error)
	cur  schema.TraceChunk
	err  error
}

func (s *chunkSource) Next() bool {
	c, ok, err := s.next()
	if err != nil {
		s.err = err
		return false
	}
	s.cur = c
	return ok
}

func (s *chunkSource) Values() ([]any, error) {
	return []any{s.cur.Stream, s.cur.Seq, s.cur.Data}, nil
}

func (s *chunkSource) Err() error { return s.err }

// ApplyTraces writes blobs, sidecars, server log texts and bundles, links,
// derived metrics and the run's dataset in one batch.
func (t *RunTx) ApplyTraces(ctx context.Context, a schema.TraceApply) (schema.TraceApplyResult, error) {
	var r schema.TraceApplyResult
	b := &pgx.Batch{}
	nb := len(a.Blobs)
	bs, bd, bsz, bst, bc := make([]int32, nb), make([][]byte, nb), make([]int64, nb), make([]int64, nb), make([]int32, nb)
	for i, x := range a.Blobs {
		bs[i], bd[i], bsz[i], bst[i], bc[i] = x.Stream, x.Digest, x.Size, x.StoredSize, x.Chunks
	}
	// Only a run that staged chunks has the staging table these read.
	staged := nb > 0 || len(a.Sidecars) > 0 || len(a.Refreshes) > 0 || len(a.LogTexts) > 0
	if staged {
		b.Queue(qInsertTraceBlobs, bs, bd, bsz, bst, bc)
	}

	ns := len(a.Sidecars)
	sd, sp, sps, sa, smj, smjs, smc, smcs := make([][]byte, ns), make([][]byte, ns), make([]int64, ns), make([][]byte, ns),
		make([][]byte, ns), make([]*int64, ns), make([][]byte, ns), make([]*int64, ns)
	sl, sst, sch, stl, sdm, skv, ssa, ssd := make([]string, ns), make([]int32, ns), make([]int32, ns), make([]int32, ns),
		make([]string, ns), make([]*int64, ns), make([]string, ns), make([]string, ns)
	for i, x := range a.Sidecars {
		sd[i], sp[i], sps[i], sa[i] = x.Digest, x.Profile, x.ProfileSize, x.AIPerfJSON
		smj[i], smc[i] = x.MetricsJSON, x.MetricsCSV
		if x.MetricsJSON != nil {
			v := x.MetricsJSONSize
			smjs[i] = &v
		}
		if x.MetricsCSV != nil {
			v := x.MetricsCSVSize
			smcs[i] = &v
		}
		sl[i], sst[i], sch[i], stl[i] = x.Layout, x.StatsStream, x.ChartStream, x.TimelineStream
		sdm[i], skv[i], ssa[i], ssd[i] = string(x.DerivedMetrics), x.KVCapacity, x.SourceArtifact, x.SourceDir
	}
	if staged {
		b.Queue(qInsertSidecars, sd, sp, sps, sa, smj, smjs, smc, smcs, sl, sst, sch, stl, sdm, skv, ssa, ssd)
	}
	nr := len(a.Refreshes)
	if nr > 0 {
		rd, rs, rc, rt, rdm, rkv := make([][]byte, nr), make([]int32, nr), make([]int32, nr), make([]int32, nr), make([]string, nr), make([]*int64, nr)
		for i, x := range a.Refreshes {
			rd[i], rs[i], rc[i], rt[i], rdm[i], rkv[i] = x.Digest, x.StatsStream, x.ChartStream, x.TimelineStream, string(x.DerivedMetrics), x.KVCapacity
		}
		b.Queue(qRefreshSidecars, rd, rs, rc, rt, rdm, rkv)
	}
	lid, ldg := links(a.TraceLinks)
	b.Queue(qLinkTraces, lid, ldg)

	nt := len(a.LogTexts)
	ts, td, tsz := make([]int32, nt), make([][]byte, nt), make([]int64, nt)
	for i, x := range a.LogTexts {
		ts[i], td[i], tsz[i] = x.Stream, x.Digest, x.Size
	}
	if nt > 0 {
		b.Queue(qInsertServerLogTexts, ts, td, tsz)
	}

	nl := len(a.Logs)
	gd, gp, gn, gs, gk, ga := make([][]byte, nl), make([]string, nl), make([]int32, nl), make([]int64, nl), make([]*int64, nl), make([]string, nl)
	var fd, fb [][]byte
	var fn []string
	var fs []int64
	for i, x := range a.Logs {
		gd[i], gp[i], gn[i], gs[i], gk[i], ga[i] = x.Digest, x.Primary, int32(len(x.Files)), x.TotalSize, x.KVCapacity, x.SourceArtifact
		for _, f := range x.Files {
			fd, fn, fb, fs = append(fd, x.Digest), append(fn, f.Name), append(fb, f.Text), append(fs, f.Size)
		}
	}
	if nl > 0 {
		b.Queue(qInsertServerLogs, gd, gp, gn, gs, gk, ga)
		b.Queue(qInsertServerLogFiles, nonNil(fd), nonNilS(fn), nonNil(fb), nonNilI(fs))
	}
	gid, gdg := links(a.LogLinks)
	b.Queue(qLinkServerLogs, gid, gdg)
	b.Queue(qApplyDerivedMetrics, t.run.WorkflowRunID)
	if len(a.ServerMetrics) > 0 {
		ids, ms := make([]int64, len(a.ServerMetrics)), make([]string, len(a.ServerMetrics))
		for i, x := range a.ServerMetrics {
			enc, err := json.Marshal(x.Metrics)
			if err != nil {
				return r, fmt.Errorf("encode the server metrics of row %d: %w", x.RowID, err)
			}
			ids[i], ms[i] = x.RowID, string(enc)
		}
		b.Queue(qApplyServerMetrics, ids, ms, nonNilS(a.ServerMetricsReplaced))
	}
	if a.Dataset != "" {
		b.Queue(qUpsertRunDataset, t.run.WorkflowRunID, a.Dataset, t.run.IngestID)
	}
	writeDataset := a.DatasetRow != nil
	if d := a.DatasetRow; writeDataset {
		b.Queue(qInsertDataset, d.ID, d.Slug, d.Label, d.Variant, d.Description, d.HFURL, d.License)
	}

	res := t.tx.SendBatch(ctx, b)
	defer res.Close()
	if staged {
		var parts int64
		if err := res.QueryRow().Scan(&r.BlobsNew, &r.BlobBytesNew, &parts); err != nil {
			return r, t.explain("write trace blobs", err)
		}
		if err := res.QueryRow().Scan(&r.SidecarsNew); err != nil {
			return r, t.explain("write trace sidecars", err)
		}
	}
	if nr > 0 {
		tag, err := res.Exec()
		if err != nil {
			return r, t.explain("refresh stale trace payloads", err)
		}
		r.SidecarsRefreshed = tag.RowsAffected()
	}
	tag, err := res.Exec()
	if err != nil {
		return r, t.explain("link traces", err)
	}
	r.RowsLinked = tag.RowsAffected()
	if nt > 0 {
		if err := res.QueryRow().Scan(&r.ServerLogTextsNew, &r.ServerLogTextBytesNew); err != nil {
			return r, t.explain("write server log texts", err)
		}
	}
	if nl > 0 {
		if tag, err = res.Exec(); err != nil {
			return r, t.explain("write server logs", err)
		}
		r.ServerLogsNew = tag.RowsAffected()
		if _, err = res.Exec(); err != nil {
			return r, t.explain("write server log files", err)
		}
	}
	if tag, err = res.Exec(); err != nil {
		return r, t.explain("link server logs", err)
	}
	r.ServerLogRowsLinked = tag.RowsAffected()
	if tag, err = res.Exec(); err != nil {
		return r, t.explain("write trace-derived metrics", err)
	}
	r.MetricsUpdated = tag.RowsAffected()
	if len(a.ServerMetrics) > 0 {
		if tag, err = res.Exec(); err != nil {
			return r, t.explain("write AgentX server metrics", err)
		}
		r.ServerMetricRowsUpdated = tag.RowsAffected()
	}
	if a.Dataset != "" {
		if _, err := res.Exec(); err != nil {
			return r, t.explain("record run dataset", err)
		}
	}
	if writeDataset {
		if _, err := res.Exec(); err != nil {
			return r, t.explain("record dataset "+a.DatasetRow.Slug, err)
		}
	}
	if err := res.Close(); err != nil {
		return r, t.explain("apply traces", err)
	}
	return r, nil
}

func links(ls []schema.RowLink) ([]int64, [][]byte) {
	ids, ds := make([]int64, len(ls)), make([][]byte, len(ls))
	for i, l := range ls {
		ids[i], ds[i] = l.RowID, l.Digest
	}
	return ids, ds
}

func nonNil(v [][]byte) [][]byte {
	if v == nil {
		return [][]byte{}
	}
	return v
}

func nonNilS(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

func nonNilI(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return v
}
