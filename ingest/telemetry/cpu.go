package telemetry

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// CPU-side (Grace) power samples, power/cpu/samples.csv of a multinode
// power bundle (producer SemiAnalysisAI/InferenceX
// infx/results/power/cpu_side.py, writer srt-slurm's cpu_power_exporter):
// v1 long (one row per sensor reading) and v2 wide (one row per scrape,
// host and socket, the ACPI rails as columns).
var (
	cpuHeaderV1 = []string{"schema_version", "timestamp_unix", "hostname", "source", "sensor", "socket_id", "power_w", "total_power_w"}
	cpuHeaderV2 = []string{"schema_version", "timestamp_unix", "hostname", "source", "sensor", "socket_id", "power_w",
		"cpu_rail_w", "soc_w", "dram_w", "total_power_w"}
)

// CPUSamples is what a CPU-side samples file holds.
type CPUSamples struct {
	Version int // 1 (long) or 2 (wide)
	Rows    int64
	// Sockets is the number of distinct (hostname, socket_id).
	Sockets int
}

// ReadCPUSamples checks a CPU-side samples file as its producer reads it:
// the header is v1 or v2 exactly, and every row has the header's fields,
// its schema_version, a finite timestamp, a hostname, source and sensor, a
// socket_id ≥ 0 and a finite power_w ≥ 0 (v2: cpu_rail_w and soc_w empty
// or the same). The first problem is returned, naming its line.
func ReadCPUSamples(r io.Reader) (CPUSamples, error) {
	var out CPUSamples
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return out, &ParseError{Reason: "empty CPU samples file (no header)"}
	}
	if err != nil {
		return out, &ParseError{Line: 1, Reason: err.Error()}
	}
	var want []string
	switch {
	case slices.Equal(header, cpuHeaderV1):
		out.Version, want = 1, cpuHeaderV1
	case slices.Equal(header, cpuHeaderV2):
		out.Version, want = 2, cpuHeaderV2
	default:
		return out, &ParseError{Line: 1, Reason: fmt.Sprintf("not a CPU samples header (v1 or v2): %q", clip(fmt.Sprint(header)))}
	}
	sockets := map[string]struct{}{}
	for line := int64(2); ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, parseErr(line, "%v", err)
		}
		if len(rec) != len(want) {
			return out, parseErr(line, "row has %d fields, the header %d", len(rec), len(want))
		}
		if v, err := strconv.Atoi(rec[0]); err != nil || v != out.Version {
			return out, parseErr(line, "schema_version %q, the header's is %d", clip(rec[0]), out.Version)
		}
		if ts, err := strconv.ParseFloat(rec[1], 64); err != nil || math.IsInf(ts, 0) || math.IsNaN(ts) {
			return out, parseErr(line, "invalid timestamp_unix %q", clip(rec[1]))
		}
		for i, name := range []string{"hostname", "source", "sensor"} {
			if rec[2+i] == "" {
				return out, parseErr(line, "empty %s", name)
			}
		}
		if why := TextProblem(rec[2]); why != "" {
			return out, parseErr(line, "hostname: %s", why)
		}
		sock, err := strconv.Atoi(rec[5])
		if err != nil || sock < 0 {
			return out, parseErr(line, "invalid socket_id %q", clip(rec[5]))
		}
		if !cpuWatts(rec[6], false) {
			return out, parseErr(line, "invalid power_w %q", clip(rec[6]))
		}
		if out.Version == 2 {
			for _, i := range []int{7, 8} {
				if !cpuWatts(rec[i], true) {
					return out, parseErr(line, "invalid %s %q", want[i], clip(rec[i]))
				}
			}
		}
		sockets[rec[2]+"\x00"+rec[5]] = struct{}{}
		out.Rows++
	}
	out.Sockets = len(sockets)
	return out, nil
}

// cpuWatts: a finite, non-negative number of watts (or, when blank is
// allowed, an empty cell).
func cpuWatts(cell string, blank bool) bool {
	if cell == "" {
		return blank
	}
	v, err := strconv.ParseFloat(cell, 64)
	return err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) && v >= 0
}
