package telemetry

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// Vendor of the GPUs a series was sampled from.
type Vendor string

const (
	VendorNVIDIA Vendor = "nvidia"
	VendorAMD    Vendor = "amd"
)

// Format is the layout of a telemetry CSV.
type Format string

const (
	FormatNVIDIASMI Format = "nvidia-smi" // nvidia-smi --query-gpu … --format=csv
	FormatAMDSMI    Format = "amd-smi"    // amd-smi metric --csv
	FormatDCGM      Format = "dcgm"       // srt-slurm dcgm-power LOGS/power/samples.csv
)

// Metric columns of a sample, in the order of SampleSchema and of the
// gpu_metric_samples table.
const (
	MetricPower = iota
	MetricTemperature
	MetricSMClock
	MetricMemClock
	MetricGPUUtil
	MetricMemUtil
	MetricEdgeTemp
	MetricMemTemp
	MetricGFXVoltage
	MetricSOCVoltage
	MetricMemVoltage
	MetricFCLK
	MetricSOCCLK
	MetricMMActivity
	NumMetrics
)

// MetricNames are the column names of the metrics (units in the name).
var MetricNames = [NumMetrics]string{
	"power_w", "temperature_c", "sm_clock_mhz", "mem_clock_mhz", "gpu_util_pct", "mem_util_pct",
	"edge_temp_c", "mem_temp_c", "gfx_voltage_mv", "soc_voltage_mv", "mem_voltage_mv",
	"fclk_mhz", "socclk_mhz", "mm_activity_pct",
}

// Columns of SampleSchema before the metrics.
const (
	ColGPU       = 0
	ColTimestamp = 1
	ColMetrics   = 2
)

// TimestampType is the sample time: microseconds since the Unix epoch, UTC.
var TimestampType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}

// SampleSchema is the canonical layout of parsed samples: one row per GPU
// per tick. gpu_index and sampled_at are never null; a metric the source
// does not report is null.
var SampleSchema = newSampleSchema()

func newSampleSchema() *arrow.Schema {
	fields := []arrow.Field{
		{Name: "gpu_index", Type: arrow.PrimitiveTypes.Int16},
		{Name: "sampled_at", Type: TimestampType},
	}
	for _, n := range MetricNames {
		fields = append(fields, arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Float32, Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

// Series is one parsed telemetry series: its samples as canonical record
// batches and its facts. The caller owns the batches and must Release.
type Series struct {
	Format Format
	Vendor Vendor
	// Host names the node of a DCGM series (one series per host); empty
	// for single-node files.
	Host    string
	Batches []arrow.RecordBatch
	Facts   Facts
	// Stats is the per-GPU digest of every metric (StatsVersion).
	Stats []GPUStat
	// GPUUUIDs is each GPU's UUID as a DCGM bundle names it (the first
	// non-empty gpu_uuid of its rows with power); nil otherwise.
	GPUUUIDs map[int16]string
}

// Rows is the number of samples in the batches.
func (s *Series) Rows() int64 {
	var n int64
	for _, b := range s.Batches {
		n += b.NumRows()
	}
	return n
}

// Release frees the batches.
func (s *Series) Release() {
	for _, b := range s.Batches {
		b.Release()
	}
	s.Batches = nil
}

// ReleaseAll releases every series.
func ReleaseAll(series []*Series) {
	for _, s := range series {
		s.Release()
	}
}
