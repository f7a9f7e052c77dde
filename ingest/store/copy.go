package store

import (
	"encoding/json"
	"fmt"

	"github.com/inferencex/ingest/schema"
)

// benchmarkSource adapts a row iterator to pgx.CopyFromSource.
type benchmarkSource struct {
	next   func() (schema.StagedBenchmark, bool, error)
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
	s.values, s.err = stagingValues(row)
	return s.err == nil
}

func (s *benchmarkSource) Values() ([]any, error) { return s.values, nil }

func (s *benchmarkSource) Err() error { return s.err }

// stagingValues lays a row out in stagingColumns order.
func stagingValues(r schema.StagedBenchmark) ([]any, error) {
	p, c := &r.Point, r.Point.Config
	metrics, err := encodeMetrics(make([]byte, 0, 2048), p.Metrics)
	if err != nil {
		return nil, fmt.Errorf("artifact %s: file %s: row %d: encode metrics: %w", r.Source.Artifact, r.Source.File, r.Source.Row, err)
	}
	var artifactID *int64
	if r.Source.ArtifactID != 0 {
		id := r.Source.ArtifactID
		artifactID = &id
	}
	return []any{
		p.Key(), r.IsAggregate, int32(r.AttemptRank),
		c.Hardware, c.Framework, c.Model, c.Precision, c.SpecMethod, c.Disagg, c.IsMultinode,
		int16(c.PrefillTP), int16(c.PrefillEP), c.PrefillDPAttention, int16(c.PrefillNumWorkers),
		int16(c.DecodeTP), int16(c.DecodeEP), c.DecodeDPAttention, int16(c.DecodeNumWorkers),
		int16(c.NumPrefillGPU), int16(c.NumDecodeGPU),
		p.BenchmarkType, p.ISL, p.OSL, int32(p.Conc), p.OffloadMode, cleanOptText(p.RecipeFingerprint), cleanOptText(p.Image),
		metrics, rawOrNil(p.Workers), rawOrNil(p.PowerInvalidReasons), rawOrNil(p.PowerAudit),
		cleanText(r.Source.Artifact), artifactID, cleanText(r.Source.File), int32(r.Source.Row),
	}, nil
}

func rawOrNil(m json.RawMessage) any {
	if len(m) == 0 {
		return nil
	}
	return sanitizeJSON(m)
}
