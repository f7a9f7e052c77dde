package trace

import (
	"bytes"
	"math"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/inferencex/ingest/schema"
)

// ServerMetricKeys are the metric keys the ingest owns on AgentX rows: it
// derives them from the raw server_metrics_export.csv and the worker logs'
// startup lines and serves them under these names; a value the producer
// published for one of them is kept under PublishedPrefix+key.
var ServerMetricKeys = []string{
	"kv_cache_pool_tokens",
	"kv_cache_pool_prefill_tokens",
	"kv_cache_pool_decode_tokens",
	"server_gpu_cache_hit_rate",
	"server_cpu_cache_hit_rate",
	"server_external_cache_hit_rate",
	"gpu_kv_cache_usage_pct",
	"total_prompt_tokens",
	"total_generation_tokens",
}

// PublishedPrefix names the producer's value of an owned key.
const PublishedPrefix = "published_"

// ServerMetricsMarker is set (to ServerMetricsVersion) on a row whose owned
// keys are the ingest's: from then on the producer's values are the
// published_* keys alone (a key the producer did not publish has none).
const (
	ServerMetricsMarker  = "server_metrics_version"
	ServerMetricsVersion = 1
)

// Role is a worker's role in a deployment.
type Role string

const (
	RoleAgg     Role = "agg"
	RolePrefill Role = "prefill"
	RoleDecode  Role = "decode"
)

var (
	srtWorkerLog = regexp.MustCompile(`_(prefill|decode|agg)_w(\d+)\.out$`)
	amdWorkerLog = regexp.MustCompile(`^(prefill|decode)(\d*)_[^/]+\.log$`)
)

// WorkerOfLogFile names the worker a server log file belongs to:
// srt-slurm <host>_<role>_w<N>.out, AMD <role>[N]_<host>.log, single-node
// server.log. ok is false for any other file (frontends, benchmark logs).
func WorkerOfLogFile(name string) (role Role, worker string, ok bool) {
	base := path.Base(name)
	if m := srtWorkerLog.FindStringSubmatch(base); m != nil {
		return Role(m[1]), m[2], true
	}
	if m := amdWorkerLog.FindStringSubmatch(base); m != nil {
		w := m[2]
		if w == "" {
			w = "0"
		}
		return Role(m[1]), w, true
	}
	if base == "server.log" {
		return RoleAgg, "0", true
	}
	return "", "", false
}

// startupLineMarks are the substrings of the startup lines the engines'
// pool rules read (vLLM, SGLang, ATOM); startupTokens the key=<int>
// arguments they read wherever they appear.
var (
	startupLineMarks = [][]byte{[]byte("GPU KV cache size:"), []byte("max_total_num_tokens="), []byte("Concurrent capacity vs context length")}
	startupMark      = regexp.MustCompile(`GPU KV cache size: [0-9,]+ tokens|max_total_num_tokens=[0-9]+|Concurrent capacity vs context length`)
	startupToken     = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])((?:data_parallel_size|dp_size)=[0-9]+)(?:[^0-9]|$)`)
)

// maxStartupLines bounds what one log file contributes.
const maxStartupLines = 4096

// StartupLines collects, from a log written to it, the whole startup lines
// and argument tokens the KV-cache pool rules read, each once, in order.
// Lines longer than 1 MiB are skipped.
type StartupLines struct {
	logLines
	seen  map[string]bool
	Lines []string
}

// NewStartupLines returns an empty collector.
func NewStartupLines() *StartupLines { return &StartupLines{seen: map[string]bool{}} }

func (s *StartupLines) Write(p []byte) (int, error) {
	s.write(p, s.line)
	return len(p), nil
}

// Close takes a last line that has no newline.
func (s *StartupLines) Close() error {
	s.flush(s.line)
	return nil
}

func (s *StartupLines) add(l string) {
	if !s.seen[l] && len(s.Lines) < maxStartupLines {
		s.seen[l] = true
		s.Lines = append(s.Lines, l)
	}
}

func (s *StartupLines) line(l []byte) {
	l = bytes.TrimSuffix(l, []byte{'\r'})
	for _, m := range startupLineMarks {
		if bytes.Contains(l, m) {
			if isStartupLine(l) {
				s.add(string(l))
			}
			break
		}
	}
	if bytes.Contains(l, []byte("_size=")) {
		for _, m := range startupToken.FindAllSubmatch(l, -1) {
			s.add(string(m[1]))
		}
	}
}

// maxStartupPrefix is how many characters may precede a startup line's
// mark (a log prefix: time, level, process).
const maxStartupPrefix = 255

// isStartupLine reports whether a mark starts within the line's first
// maxStartupPrefix characters. The leftmost match decides: a later one
// starts later still. (The bound is counted here rather than written as
// ^.{0,255} in the pattern: the compiled form of such a bound is large,
// and the package compiles the pattern at every start of the binary.)
func isStartupLine(l []byte) bool {
	loc := startupMark.FindIndex(l)
	return loc != nil && utf8.RuneCount(l[:loc[0]]) <= maxStartupPrefix
}

// LogFileLines are the startup lines of one server log file.
type LogFileLines struct {
	Name  string
	Lines []string
}

// RoleConfig is one role's topology from the row's config.
type RoleConfig struct {
	TP          int
	DPAttention bool
	NumWorkers  int
}

// ServerMetricsInput is what the owned keys of one AgentX row derive from.
type ServerMetricsInput struct {
	Framework       string
	Disagg          bool
	Prefill, Decode RoleConfig
	// Scrape is the point's server_metrics_export.csv, nil without one.
	Scrape Scrape
	// Logs are the startup lines of the row's server log files; nil when
	// the row has no server log bundle.
	Logs []LogFileLines
	// ClientPrompt and ClientGeneration are the client-side token totals
	// (mean tokens × completed requests), used when the scrape has no
	// token counters; NaN when unknown.
	ClientPrompt, ClientGeneration float64
}

// DerivedServerMetrics are the owned keys that could be derived (a key
// absent here is removed from the row) and why the KV-cache pool could
// not be, when it could not.
type DerivedServerMetrics struct {
	Values     map[string]float64
	PoolReason string
}

// seriesRole is the disaggregated role Dynamo and TRT-LLM label a
// worker endpoint's series with.
func seriesRole(labels map[string]string) Role {
	l, ok := labels["dynamo_component"]
	if !ok {
		l = labels["disaggregation_mode"]
	}
	switch strings.ToLower(l) {
	case "prefill", "context", "ctx":
		return RolePrefill
	case "backend", "decode", "generation", "gen":
		return RoleDecode
	}
	return ""
}

func roleScrape(s Scrape, role Role) Scrape {
	if role == RoleAgg {
		return s
	}
	out := Scrape{}
	for name, series := range s {
		var kept []ScrapeSeries
		for _, x := range series {
			if seriesRole(x.Labels) == role {
				kept = append(kept, x)
			}
		}
		if len(kept) > 0 {
			out[name] = kept
		}
	}
	return out
}

func rolePool(e engine, in ServerMetricsInput, s Scrape, role Role) (int64, string) {
	cfg := in.Decode
	if role == RolePrefill {
		cfg = in.Prefill
	}
	topo := roleTopology{tp: cfg.TP, dpAttention: cfg.DPAttention}
	if role != RoleAgg { // aggregated configs may count DP ranks as workers
		topo.workers = cfg.NumWorkers
	}
	byWorker := map[string][]string{}
	var order []string
	for _, f := range in.Logs {
		r, w, ok := WorkerOfLogFile(f.Name)
		if !ok || r != role {
			continue
		}
		if _, seen := byWorker[w]; !seen {
			order = append(order, w)
		}
		byWorker[w] = append(byWorker[w], f.Lines...)
	}
	workers := make([][]string, 0, len(order))
	for _, w := range order {
		workers = append(workers, byWorker[w])
	}
	n, why := e.pool(poolInput{workers: workers, scrape: roleScrape(s, role), topology: topo})
	if why != "" {
		return 0, string(role) + ": " + why
	}
	return n, ""
}

// DeriveServerMetrics derives the owned keys of one AgentX row the way the
// reference ingest does: hit rates (from the prefill workers when
// disaggregated, null above 1), KV usage, token totals (the Dynamo
// frontend's, else the engine's when aggregated, else the client's), and
// the KV-cache pool (disaggregated: the decode pool, both role pools
// kept).
func DeriveServerMetrics(in ServerMetricsInput) DerivedServerMetrics {
	out := DerivedServerMetrics{Values: map[string]float64{}}
	set := func(k string, v optional) {
		if v.ok && schema.Finite(v.v) {
			out.Values[k] = v.v
		}
	}
	s := in.Scrape
	if s == nil {
		s = Scrape{}
	}
	e, known := engines[in.Framework]
	var whole, hits scrapeScalars
	if known {
		whole, hits = e.scalars(s), e.scalars(s)
		if in.Disagg {
			// Prefix-cache hits happen on prefill workers; decode counters
			// would dilute them.
			if ps := roleScrape(s, RolePrefill); len(ps) > 0 {
				hits = e.scalars(ps)
			}
		}
	}
	hitRate := func(v optional) optional {
		if v.ok && v.v > 1 { // the counters' windows do not line up
			return optional{}
		}
		return v
	}
	set("server_gpu_cache_hit_rate", hitRate(hits.gpuHit))
	set("server_cpu_cache_hit_rate", hitRate(hits.cpuHit))
	set("server_external_cache_hit_rate", hitRate(hits.externalHit))
	set("gpu_kv_cache_usage_pct", whole.kvUsage.or(fraction(s.gaugeMax("dynamo_component_gpu_cache_usage_percent"))))
	tokens := func(frontend string, engineTotal optional, client float64) optional {
		v := s.sum(frontend)
		if !v.ok && !in.Disagg {
			v = engineTotal // a disaggregated request counts on both roles
		}
		if !v.ok && !math.IsNaN(client) {
			v = some(client)
		}
		if v.ok {
			v.v = math.Round(v.v)
		}
		return v
	}
	set("total_prompt_tokens", tokens("dynamo_frontend_input_sequence_tokens", whole.prompt, in.ClientPrompt))
	set("total_generation_tokens", tokens("dynamo_frontend_output_tokens", whole.generation, in.ClientGeneration))

	switch {
	case !known:
		out.PoolReason = "unsupported framework " + in.Framework
	case in.Logs == nil && e.needsLog:
		out.PoolReason = "no server log stored"
	case !in.Disagg:
		if n, why := rolePool(e, in, s, RoleAgg); why == "" {
			out.Values["kv_cache_pool_tokens"] = float64(n)
		} else {
			out.PoolReason = why
		}
	default:
		// The requests' KV lives in the decode pool after prefill: it is
		// the working-set ceiling.
		if n, why := rolePool(e, in, s, RolePrefill); why == "" {
			out.Values["kv_cache_pool_prefill_tokens"] = float64(n)
		}
		if n, why := rolePool(e, in, s, RoleDecode); why == "" {
			out.Values["kv_cache_pool_decode_tokens"] = float64(n)
			out.Values["kv_cache_pool_tokens"] = float64(n)
		} else {
			out.PoolReason = why
		}
	}
	return out
}
