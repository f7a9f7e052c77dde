package schema

// TracePoint is one benchmark row the run wrote (or found unchanged), as
// the traces stage sees it: its winning source and its current links.
type TracePoint struct {
	// Digest is the content digest of the winning row, which identifies
	// the stored row within the run.
	Digest        []byte
	RowID         int64
	BenchmarkType string
	Artifact      string
	File          string
	IsAggregate   bool
	// TraceDigest and ServerLogDigest are the digests of the sidecar and
	// server log bundle the row is linked to, nil when unlinked.
	TraceDigest     []byte
	ServerLogDigest []byte
	// Written is set when this ingest wrote the row (a new point or new
	// values) with server-metric keys derived from the row alone: its
	// config and derivation inputs as written, so that a point with no
	// scrape and no server log needs no read-back. Nil for a row an earlier
	// ingest stored.
	Written *TraceRowLink
}

// TraceRowLink is a stored benchmark row's id and current links.
type TraceRowLink struct {
	RowID                        int64
	TraceDigest, ServerLogDigest []byte
	// TraceAdopted: the row's trace is one ingest adopt took over from
	// the reference, which kept no profile_export_aiperf.json.
	TraceAdopted bool
	// Config and Metrics are what the owned server-metric keys of an
	// AgentX row derive from: the row's config and the stored metrics
	// among ServerMetricInputs (absent keys, non-numbers left out).
	Config  Config
	Metrics map[string]float64
	// OwnedOther is set when the row holds an owned key, a published_*
	// copy or the marker with a value that is not a number (Metrics leaves
	// it out; the derived values replace it).
	OwnedOther bool
}

// RowServerMetrics are the owned server-metric keys of one AgentX row, as
// the traces stage derived them: Metrics replaces every owned key, its
// published_* copy and the marker (ServerMetricsReplaced) in the row.
type RowServerMetrics struct {
	RowID   int64
	Metrics map[string]float64
}

// ServerMetricWarning is a published server metric of an AgentX row that
// the value the ingest derived from the raw server metrics differs from.
type ServerMetricWarning struct {
	Artifact  string  `json:"artifact"`
	File      string  `json:"file"`
	Field     string  `json:"field"`
	Published float64 `json:"published"`
	Derived   float64 `json:"derived"`
	// RelDiff is |derived − published| / |published| (1 when published is
	// 0 and derived is not).
	RelDiff float64 `json:"relDiff"`
}

// TraceKnown are the digests among those asked for that are already stored.
// Stale are the stored sidecars whose derived payloads are of another
// version than the ones this build writes: they are recomputed.
type TraceKnown struct {
	Sidecars, ServerLogs, Blobs, Stale, LogTexts map[string]bool
}

// TracePayloadVersions are the versions of the derived payloads a build
// writes (aggregate_stats, chart_series, request_timeline): a stored sidecar
// holding others is stale.
type TracePayloadVersions struct {
	Stats, Chart, Timeline int
}

// TraceChunk is one piece of a staged stream: a compressed blob or an
// uncompressed JSON payload, cut into chunks of at most a few MiB.
type TraceChunk struct {
	Stream int32
	Seq    int32
	Data   []byte
}

// TraceBlob is a staged stream to keep as a content-addressed blob.
type TraceBlob struct {
	Stream     int32
	Digest     []byte
	Size       int64
	StoredSize int64
	Chunks     int32
}

// TraceSidecar is one trace sidecar to store; its JSON payloads are staged
// streams.
type TraceSidecar struct {
	Digest                                       []byte
	Profile, AIPerfJSON, MetricsJSON, MetricsCSV []byte
	ProfileSize, MetricsJSONSize, MetricsCSVSize int64
	Layout                                       string
	// StatsStream, ChartStream and TimelineStream stage the JSON payloads;
	// 0 for none (no chart series without a server metrics export, no
	// timeline without a timed request).
	StatsStream, ChartStream, TimelineStream int32
	DerivedMetrics                           []byte
	KVCapacity                               *int64
	SourceArtifact, SourceDir                string
}

// ServerLogFile is one stored file of a server log bundle.
type ServerLogFile struct {
	Name string
	Text []byte // digest of the file's bytes: its text in server_log_texts
	Size int64
}

// ServerLogText is a log file to store as text: a staged stream of the
// text, keyed by the sha256 of the file's bytes.
type ServerLogText struct {
	Stream int32
	Digest []byte
	Size   int64
}

// ServerLogBundle is the server log of one point.
type ServerLogBundle struct {
	Digest         []byte
	Primary        string
	Files          []ServerLogFile
	TotalSize      int64
	KVCapacity     *int64
	SourceArtifact string
}

// RowLink links a benchmark row to a sidecar or server log by digest.
type RowLink struct {
	RowID  int64
	Digest []byte
}

// TraceApply is everything the traces stage writes, in one batch.
type TraceApply struct {
	Blobs    []TraceBlob
	Sidecars []TraceSidecar
	// Refreshes are stored sidecars whose payloads were stale: their
	// payloads, derived metrics and KV-cache pool are replaced (only
	// Digest, the streams, DerivedMetrics and KVCapacity are used).
	Refreshes  []TraceSidecar
	TraceLinks []RowLink
	Logs       []ServerLogBundle
	LogTexts   []ServerLogText
	LogLinks   []RowLink
	// Dataset is the run's dataset slug, empty when no row names one.
	Dataset string
	// DatasetRow is its catalogue entry, nil when it is not catalogued.
	DatasetRow *DatasetRow
	// ServerMetrics are the owned server-metric keys of the run's AgentX
	// rows, and ServerMetricsReplaced every key they replace.
	ServerMetrics         []RowServerMetrics
	ServerMetricsReplaced []string
}

// TraceApplyResult is what the batch changed.
type TraceApplyResult struct {
	BlobsNew, BlobBytesNew, SidecarsNew, RowsLinked    int64
	SidecarsRefreshed                                  int64
	ServerLogsNew, ServerLogRowsLinked, MetricsUpdated int64
	ServerLogTextsNew, ServerLogTextBytesNew           int64
	// ServerMetricRowsUpdated: AgentX rows whose owned server-metric keys
	// changed.
	ServerMetricRowsUpdated int64
}

// DerivedMetricPrefix starts the name of every metric the ingest derives
// from a trace (derived_gpu_cache_hit_rate, …) rather than reads from a
// published row. Published metrics are stored exactly as published, so a
// published key with this prefix fails its row.
const DerivedMetricPrefix = "derived_"

// DatasetRow is the row of the dashboard's datasets table for a catalogued
// dataset; a stored row is never overwritten.
type DatasetRow struct {
	ID, Slug, Label, Variant, Description, HFURL, License string
}

// DatasetConversation is one conversation of a loaded corpus
// (dataset_conversations): its totals and its structure as JSON.
type DatasetConversation struct {
	ConvID                      string
	Models                      []string
	NumTurns, NumSubagentGroups int
	TotalIn, TotalOut           int64
	TotalCached                 int64
	Structure                   []byte
}

// DatasetLoad is what a corpus load writes besides the conversations: the
// dataset's row, and, once every conversation is read, its count, summary
// and chart data (JSON).
type DatasetLoad struct {
	Row DatasetRow
	// Finish is called after the last conversation.
	Finish func() (count int, summary, chartData []byte, err error)
}
