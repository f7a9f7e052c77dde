package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/inferencex/ingest/schema"
)

// benchmarkSource adapts a row iterator to pgx.CopyFromSource. pgx encodes
// the values of a row before it asks for the next one, so the values and
// the metrics buffer they point into are reused from row to row.
type benchmarkSource struct {
	next  func() (schema.StagedBenchmark, bool, error)
	date  string
	known map[digest]struct{}
	// adopted finds the rows an adopt took over from the reference.
	adopted adoptedPoints
	// seen, when set, is told of every copy as it is staged.
	seen func(schema.StagedCopy)
	// sets collects the rows' configs and availability.
	sets *runSets
	// seq numbers the rows in staging order.
	seq    int32
	enc    metricsEncoder
	buf    []byte
	stored []byte // the StoredMetrics encoding, when a row has them
	values []any
	err    error
}

func (s *benchmarkSource) Next() bool {
	row, ok, err := s.next()
	if err != nil {
		s.err = err
		return false
	}
	if !ok {
		return false
	}
	var adopted bool
	s.values, s.buf, s.stored, adopted, s.err = stagingValues(s.values[:0], row, s.seq, s.date, s.known, s.adopted, &s.enc, s.buf, s.stored, s.seen)
	s.seq++
	// An adopted row keeps its config: ours for the point (another GPU
	// count) is not written for it.
	if s.err == nil && !adopted {
		s.sets.add(&row.Point)
	}
	return s.err == nil
}

func (s *benchmarkSource) Values() ([]any, error) { return s.values, nil }

func (s *benchmarkSource) Err() error { return s.err }

// digest identifies a row's point and stored values.
type digest [16]byte

// stagingValues lays a row out in stagingColumns order, appended to
// values. A row whose digest the run already has is staged without its
// values (unchanged): it only takes part in choosing the point's winner.
// So is a row an adopted row of the run stands for (adoptedPoints): the
// reference's row keeps its values and id, as a rerun of a run of ours
// keeps them, and the copy takes that row's digest, by which the later
// stages find it. The metrics value is buf's bytes, or stored's for a row with
// StoredMetrics: valid until they are reused.
func stagingValues(values []any, r schema.StagedBenchmark, seq int32, date string, known map[digest]struct{}, adopted adoptedPoints,
	enc *metricsEncoder, buf, stored []byte, seen func(schema.StagedCopy)) (_ []any, _, _ []byte, isAdopted bool, _ error) {
	p, c := &r.Point, r.Point.Config
	metrics, err := enc.encode(buf[:0], p.Metrics)
	if err != nil {
		return nil, buf, stored, false, fmt.Errorf("artifact %s: file %s: row %d: encode metrics: %w", r.Source.Artifact, r.Source.File, r.Source.Row, err)
	}
	key := r.Key
	if key == "" {
		key = p.Key()
	}
	image, fingerprint, kvLib := cleanOptText(p.Image), cleanOptText(p.RecipeFingerprint), cleanOptText(p.KVTransferLib)
	workers, reasons, audit := rawOrNil(p.Workers), rawOrNil(p.PowerInvalidReasons), rawOrNil(p.PowerAudit)
	keyHash := sha256.Sum256([]byte(key))
	d := contentDigest(keyHash[:], date, image, kvLib, metrics, workers, reasons, audit)
	_, unchanged := known[d]
	if !unchanged {
		if ad, ok := adopted.match(p, fingerprint); ok {
			d, unchanged, isAdopted = ad, true, true
		}
	}
	var metricsValue any = metrics
	writtenMetrics := p.Metrics
	if r.StoredMetrics != nil && !unchanged {
		writtenMetrics = r.StoredMetrics
		if stored, err = enc.encode(stored[:0], r.StoredMetrics); err != nil {
			return nil, metrics, stored, false, fmt.Errorf("artifact %s: file %s: row %d: encode metrics: %w", r.Source.Artifact, r.Source.File, r.Source.Row, err)
		}
		metricsValue = stored
	}
	serverFrom := r.ServerMetricsFrom
	// The five values the curves keep, read here so that the update need
	// not open the stored jsonb (see impactValues and qCapturePointValues).
	vals, valuesKnown := impactValues(writtenMetrics)
	if unchanged {
		metricsValue, workers, reasons, audit, serverFrom = nil, nil, nil, nil, nil
		vals, valuesKnown = [5]any{}, false
	}
	var artifactID *int64
	if r.Source.ArtifactID != 0 {
		id := r.Source.ArtifactID
		artifactID = &id
	}
	artifact, file := cleanText(r.Source.Artifact), cleanText(r.Source.File)
	if seen != nil {
		c := schema.StagedCopy{Digest: d, BenchmarkType: p.BenchmarkType, Rank: r.Rank(), Seq: seq, Unchanged: unchanged, Adopted: isAdopted,
			Written: serverFrom}
		copy(c.Point[:], keyHash[:16])
		c.Rank.Artifact, c.Rank.File = artifact, file
		seen(c)
	}
	return append(values,
		seq, keyHash[:16], r.IsAggregate, int32(r.AttemptRank),
		c.Hardware, c.Framework, c.Model, c.Precision, c.SpecMethod, c.Disagg, c.IsMultinode,
		int16(c.PrefillTP), int16(c.PrefillEP), c.PrefillDPAttention, int16(c.PrefillNumWorkers),
		int16(c.DecodeTP), int16(c.DecodeEP), c.DecodeDPAttention, int16(c.DecodeNumWorkers),
		int16(c.NumPrefillGPU), int16(c.NumDecodeGPU),
		p.BenchmarkType, p.ISL, p.OSL, int32(p.Conc), p.OffloadMode, fingerprint, image,
		metricsValue, nilIfEmpty(workers), nilIfEmpty(reasons), nilIfEmpty(audit),
		d[:], unchanged,
		artifact, artifactID, file, int32(r.Source.Row),
		valuesKnown, vals[0], vals[1], vals[2], vals[3], vals[4],
		kvLib,
	), metrics, stored, isAdopted, nil
}

// contentDigest hashes the point (its key's hash) and every value written
// for it. A row without a kv_transfer_lib hashes as before the column
// existed, so the rows of earlier builds keep their digests.
func contentDigest(keyHash []byte, date string, image, kvLib *string, metrics, workers, reasons, audit []byte) digest {
	h := sha256.New()
	field := func(b []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	field(keyHash)
	field([]byte(date))
	if image != nil {
		field([]byte("i" + *image))
	} else {
		field(nil)
	}
	field(metrics)
	field(workers)
	field(reasons)
	field(audit)
	if kvLib != nil {
		field([]byte("k" + *kvLib))
	}
	var d digest
	copy(d[:], h.Sum(nil))
	return d
}

func nilIfEmpty(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

func rawOrNil(m json.RawMessage) []byte {
	if len(m) == 0 {
		return nil
	}
	return sanitizeJSON(m)
}
