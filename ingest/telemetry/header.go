package telemetry

import (
	"fmt"
	"slices"
	"strings"
)

// role is what the reader does with one CSV column.
type role int

const (
	roleIgnore role = iota
	roleTime
	roleGPU
	roleHost
	roleMetric
	roleHotspot // AMD: the temperature, preferred over edge
	roleUUID    // DCGM: the GPU's UUID (kept for the identity sidecar)
)

type column struct {
	name   string
	role   role
	metric int // for roleMetric
	// numeric: the cells are bare numbers (see numericColumn)
	numeric bool
}

// layout is a checked header: the format and what each column is.
type layout struct {
	format  Format
	vendor  Vendor
	columns []column
	// indexes of the key columns in columns (-1 when absent)
	time, gpu, host, hotspot, uuid int
	// metricCol is the column of each metric (-1: none)
	metricCol [NumMetrics]int
	// metricHeader is the header name of each metric's column, for
	// errors ("" where a metric has no column).
	metricHeader [NumMetrics]string
}

var nvidiaColumns = map[string]column{
	"timestamp":             {role: roleTime},
	"index":                 {role: roleGPU},
	"power.draw":            {role: roleMetric, metric: MetricPower},
	"temperature.gpu":       {role: roleMetric, metric: MetricTemperature},
	"clocks.current.sm":     {role: roleMetric, metric: MetricSMClock},
	"clocks.current.memory": {role: roleMetric, metric: MetricMemClock},
	"utilization.gpu":       {role: roleMetric, metric: MetricGPUUtil},
	"utilization.memory":    {role: roleMetric, metric: MetricMemUtil},
}

var amdColumns = map[string]column{
	"timestamp":    {role: roleTime},
	"gpu":          {role: roleGPU},
	"socket_power": {role: roleMetric, metric: MetricPower},
	"gfx_activity": {role: roleMetric, metric: MetricGPUUtil},
	"umc_activity": {role: roleMetric, metric: MetricMemUtil},
	"mm_activity":  {role: roleMetric, metric: MetricMMActivity},
	"gfx_0_clk":    {role: roleMetric, metric: MetricSMClock},
	"mem_0_clk":    {role: roleMetric, metric: MetricMemClock},
	"fclk_0_clk":   {role: roleMetric, metric: MetricFCLK},
	"socclk_0_clk": {role: roleMetric, metric: MetricSOCCLK},
	"hotspot":      {role: roleHotspot},
	"edge":         {role: roleMetric, metric: MetricEdgeTemp},
	"mem":          {role: roleMetric, metric: MetricMemTemp},
	"gfx_voltage":  {role: roleMetric, metric: MetricGFXVoltage},
	"soc_voltage":  {role: roleMetric, metric: MetricSOCVoltage},
	"mem_voltage":  {role: roleMetric, metric: MetricMemVoltage},
}

var dcgmColumns = map[string]column{
	"timestamp_unix": {role: roleTime},
	"hostname":       {role: roleHost},
	"gpu_index":      {role: roleGPU},
	"gpu_uuid":       {role: roleUUID},
	"power_w":        {role: roleMetric, metric: MetricPower},
	"temperature_c":  {role: roleMetric, metric: MetricTemperature},
	"gpu_util_pct":   {role: roleMetric, metric: MetricGPUUtil},
}

// parseHeader detects the format of a header line (nvidia-smi, amd-smi or
// DCGM, by its columns; docs/formats.md, "Telemetry: GPU metrics and
// power") and lays out its columns. The line has no line terminator.
func parseHeader(line string) (*layout, error) {
	line = strings.TrimPrefix(line, "\ufeff")
	lower := strings.ToLower(line)
	names := strings.Split(lower, ",")
	for i, n := range names {
		names[i] = strings.TrimSpace(n)
	}
	has := func(n string) bool { return slices.Contains(names, n) }
	l := &layout{time: -1, gpu: -1, host: -1, hotspot: -1, uuid: -1}
	var known map[string]column
	switch {
	case has("timestamp_unix") && has("hostname") && has("gpu_index") && has("power_w"):
		l.format, l.vendor, known = FormatDCGM, VendorNVIDIA, dcgmColumns
	case strings.Contains(lower, "socket_power") || strings.Contains(lower, "gfx_activity"):
		l.format, l.vendor, known = FormatAMDSMI, VendorAMD, amdColumns
	case strings.Contains(lower, "power.draw"):
		l.format, l.vendor, known = FormatNVIDIASMI, VendorNVIDIA, nvidiaColumns
		for i, n := range names {
			// "power.draw [w]" → "power.draw"
			if j := strings.LastIndex(n, " ["); j > 0 && strings.HasSuffix(n, "]") {
				names[i] = strings.TrimSpace(n[:j])
			}
		}
	default:
		return nil, fmt.Errorf("unknown telemetry header (neither nvidia-smi, amd-smi nor DCGM samples): %q", clip(line))
	}
	for m := range l.metricCol {
		l.metricCol[m] = -1
	}
	seen := map[string]int{} // known column → its 1-based position
	for i, n := range names {
		c := column{name: n}
		if k, ok := known[n]; ok {
			// A column the ingest reads, named twice: which one holds
			// the values is a guess, and a wrong guess stores wrong
			// numbers. The file fails.
			if at, dup := seen[n]; dup {
				return nil, fmt.Errorf("%s header names the %q column twice (columns %d and %d): %q", l.format, n, at, i+1, clip(line))
			}
			c.role, c.metric = k.role, k.metric
			seen[n] = i + 1
		}
		c.numeric = numericColumn(l.format, c.role)
		l.columns = append(l.columns, c)
		switch c.role {
		case roleTime:
			l.time = i
		case roleGPU:
			l.gpu = i
		case roleHost:
			l.host = i
		case roleHotspot:
			l.hotspot = i
		case roleUUID:
			l.uuid = i
		case roleMetric:
			l.metricCol[c.metric], l.metricHeader[c.metric] = i, n
		}
	}
	var missing []string
	for _, req := range []struct {
		idx  int
		name string
	}{{l.time, "timestamp"}, {l.gpu, "gpu index"}, {l.metricCol[MetricPower], "power"}} {
		if req.idx < 0 {
			missing = append(missing, req.name)
		}
	}
	if l.format == FormatDCGM && l.host < 0 {
		missing = append(missing, "hostname")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s header lacks the %s column: %q", l.format, strings.Join(missing, ", "), clip(line))
	}
	return l, nil
}

// numericColumn: the column's cells are bare numbers, parsed as such
// (amd-smi and DCGM, but for amd-smi's timestamp: epoch seconds,
// milliseconds or ISO-8601). nvidia-smi writes units inside the cells
// ("187.80 W"): its cells are read as text and converted. Columns the
// ingest does not keep, and hostnames, are text.
func numericColumn(f Format, r role) bool {
	switch {
	case r == roleIgnore, r == roleHost, r == roleUUID:
		return false
	case f == FormatNVIDIASMI:
		return false
	case r == roleTime && f == FormatAMDSMI:
		return false
	}
	return true
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
