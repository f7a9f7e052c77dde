package telemetry

import "github.com/apache/arrow-go/v18/arrow"

// StoredSeries is a series a run already has in the database.
type StoredSeries struct {
	ID       int64
	Artifact string
	File     string
	Digest   []byte
	Vendor   Vendor
	// Samples is the stored sample_count (the artifact's series inventory).
	Samples int64
	// Facts holds the stored facts the power checks use: GPUs, window
	// source, energy and average power (HasPower when they are set).
	Facts Facts
	// Adopted: the series came from the reference ingest's database
	// (`ingest adopt`), its digest is not ours; CSVSha256 is the
	// reference's hex sha256 of the CSV.
	Adopted   bool
	CSVSha256 string
}

// WindowAdopted is the window source of a series `ingest adopt` took from
// the reference's database (its window is the series span; the reference
// kept no power facts).
const WindowAdopted = "adopted"

// RunPoint is a benchmark row the run has in the database, with what the
// telemetry stage needs of it: where it came from, its identity, and its
// published power.
type RunPoint struct {
	ID                int64
	SourceArtifact    string
	SourceFile        string
	BenchmarkType     string
	ISL, OSL          *int32
	Conc              int32
	RecipeFingerprint string
	Hardware          string
	Model             string
	Framework         string
	Precision         string
	// Published power (absent keys are nil).
	PowerValid         *float64
	PowerSchemaVersion *float64
	AvgPowerW          *float64
	AvgTotalGPUPowerW  *float64
	TotalGPUEnergyJ    *float64
	JoulesPerOutputTok *float64
	// The window of the row's power_audit, seconds since the epoch.
	AuditWindowStart, AuditWindowEnd *float64
	// AuditSampleCount and AuditObservedGPUs are the producer's counts.
	AuditSampleCount, AuditObservedGPUs *int64
}

// RunState is what the telemetry stage reads before writing: the run's
// stored series and its benchmark rows.
type RunState struct {
	Series []StoredSeries
	Points []RunPoint
}

// SeriesRow is one series to insert.
type SeriesRow struct {
	ID        int64
	Artifact  string
	ConfigKey string
	File      string
	Vendor    Vendor
	Format    Format
	Host      string
	Digest    []byte
	Facts     Facts
	// CSVSha256 is the hex sha256 of the CSV's bytes.
	CSVSha256 string
	// Sidecars is the series' sidecars document (JSON), as the reference
	// builds it (docs/schema.md).
	Sidecars []byte
	// Stats is the per-GPU digest, of version StatsVersion.
	Stats []GPUStat
}

// Link ties a benchmark row to a series.
type Link struct {
	BenchmarkID, SeriesID int64
}

// SampleBatch is one canonical batch of a series' samples on its way to
// the database; whoever encodes it releases Rec.
type SampleBatch struct {
	SeriesID int64
	Rec      arrow.RecordBatch
}

// WriteResult counts what the final write of the stage did.
type WriteResult struct {
	SeriesInserted int64
	SeriesReplaced int64
	LinksInserted  int64
}

// ExportRow is one stored sample with its series, as the export reads it.
// The strings are shared by every row of a series.
type ExportRow struct {
	SeriesID  int64
	Artifact  string
	File      string
	Host      string
	GPU       int16
	SampledAt int64 // microseconds since the epoch, UTC
	Metrics   [NumMetrics]float32
	Valid     [NumMetrics]bool
}
