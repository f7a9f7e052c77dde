package benchmarks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/inferencex/ingest/ingest/benchmark"
	"github.com/inferencex/ingest/ingest/runstate"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/strictjson"
	"github.com/inferencex/ingest/schema"
)

// maxRunStatsBytes bounds a run_stats.json read into memory; the real file
// is a few hundred bytes.
const maxRunStatsBytes = 1 << 20

// ReadRunStats parses every run-stats artifact: an object mapping cluster
// names to {n_success, total}. Bad entries are reported and left out; a
// cluster seen twice keeps its first entry (artifacts and files are read in
// name order).
func (s *Stage) ReadRunStats(arts []*source.Artifact) []schema.RunStat {
	var out []schema.RunStat
	seen := map[string]bool{}
	for _, a := range arts {
		_ = a.Load() // Err is reported below
		rec := runstate.NewRecord(a)
		*s.records = append(*s.records, rec)
		s.tally.Summary().Details.ArtifactsRead++
		for _, p := range a.Problems {
			s.tally.Fail(schema.CategoryRun, a.Name, p.File, p.Reason)
		}
		if a.Err != nil {
			s.tally.Fail(schema.CategoryRun, a.Name, "", a.Err.Error())
			continue
		}
		fsys, err := a.FS()
		if err != nil {
			s.tally.Fail(schema.CategoryRun, a.Name, "", err.Error())
			continue
		}
		for _, file := range runstate.JSONFiles(a) {
			stats, err := s.parseRunStatsFile(fsys, a.Name, file, rec)
			if err != nil {
				s.tally.Fail(schema.CategoryRun, a.Name, file, err.Error())
				continue
			}
			for _, st := range stats {
				if seen[st.Cluster] {
					s.tally.Note(fmt.Sprintf("run stats for %s appear more than once; kept the first (%s)", st.Cluster, a.Name))
					continue
				}
				seen[st.Cluster] = true
				out = append(out, st)
			}
		}
		_ = a.Release()
		rec.Seal()
	}
	return out
}

func (s *Stage) parseRunStatsFile(fsys fs.FS, artifact, file string, rec *runstate.Record) ([]schema.RunStat, error) {
	f, err := fsys.Open(file)
	if err != nil {
		return nil, fmt.Errorf("cannot open: %w", err)
	}
	defer f.Close()
	dr := runstate.NewDigestReader(io.LimitReader(f, maxRunStatsBytes+1))
	data, err := io.ReadAll(dr)
	rec.AddFile(file, dr.Digest(), dr.N)
	s.tally.Summary().Details.FilesRead++
	s.tally.Summary().Details.BytesRead += dr.N
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(data) > maxRunStatsBytes {
		return nil, fmt.Errorf("run stats file is larger than %d bytes", maxRunStatsBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("empty file")
	}
	if err := strictjson.Check(data); err != nil {
		return nil, err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a JSON object of clusters: %v", err)
	}
	if v, ok := doc["result_schema_version"]; ok {
		// A stamp on the whole file covers every entry.
		if err := checkSchemaVersion(v); err != nil {
			s.tally.Summary().Details.UnsupportedSchemaRows++
			return nil, err
		}
		delete(doc, "result_schema_version")
	}
	keys := slices.Sorted(maps.Keys(doc))
	var out []schema.RunStat
	for _, key := range keys {
		st, err := s.runStat(key, doc[key])
		if err != nil {
			s.tally.Fail(schema.CategoryRun, artifact, file, fmt.Sprintf("cluster %q: %v", key, err))
			continue
		}
		if st == nil {
			continue
		}
		st.Source = schema.Provenance{Artifact: artifact, File: file}
		out = append(out, *st)
	}
	return out, nil
}

func (s *Stage) runStat(key string, raw json.RawMessage) (*schema.RunStat, error) {
	cluster := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(key), "cluster:")))
	if cluster == "" {
		return nil, fmt.Errorf("empty cluster name")
	}
	var stamp struct {
		Version *json.RawMessage `json:"result_schema_version"`
	}
	if json.Unmarshal(raw, &stamp) == nil && stamp.Version != nil {
		if err := checkSchemaVersion(*stamp.Version); err != nil {
			s.tally.Summary().Details.UnsupportedSchemaRows++
			return nil, err
		}
	}
	var v struct {
		NSuccess *float64 `json:"n_success"`
		Total    *float64 `json:"total"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("not an object with numeric n_success and total: %v", err)
	}
	if v.NSuccess == nil || v.Total == nil {
		return nil, fmt.Errorf("n_success and total are required")
	}
	ok, total := *v.NSuccess, *v.Total
	if !isCount(ok) || !isCount(total) {
		return nil, fmt.Errorf("n_success %v and total %v must be non-negative integers", ok, total)
	}
	if ok > total {
		return nil, fmt.Errorf("n_success %v is larger than total %v", ok, total)
	}
	hw, known := s.deps.Catalog.ResolveHardware(cluster)
	if !known {
		s.tally.AddUnmapped("hardware", cluster)
		return nil, fmt.Errorf("unknown hardware (add it to the catalog)")
	}
	return &schema.RunStat{Cluster: cluster, Hardware: hw, NSuccess: int(ok), Total: int(total)}, nil
}

func isCount(v float64) bool {
	return v >= 0 && v <= math.MaxInt32 && v == math.Trunc(v)
}

// checkSchemaVersion applies benchmark.CheckResultSchemaVersion to the raw
// result_schema_version of a run-stats file or entry.
func checkSchemaVersion(raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("result_schema_version: %v", err)
	}
	return benchmark.CheckResultSchemaVersion(map[string]any{"result_schema_version": v})
}
