package trace

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// Scrape is AIPerf's server_metrics_export.csv: one row per scraped
// Prometheus series with its profiling-phase summary (total for counters,
// avg/min/max for gauges), by metric name, in file order.
type Scrape map[string][]ScrapeSeries

// ScrapeSeries is one series: its endpoint, its labels and its statistics.
type ScrapeSeries struct {
	Endpoint string
	Labels   map[string]string
	Stats    map[string]float64
}

// statColumn names the columns that hold statistics; any other column but
// nonLabelColumns is a label.
var statColumn = regexp.MustCompile(`^(?:avg|min|max|std|total|sum|count|rate|p\d+(?:\.\d+)?(?:_estimate)?|(?:rate|count|sum)_\w+)$`)

var nonLabelColumns = map[string]bool{"Endpoint": true, "Type": true, "Metric": true, "Unit": true, "Description": true, "buckets": true}

// maxScrapeBytes bounds the export read (a real one is tens of KiB).
const maxScrapeBytes = 64 << 20

// ReadScrape reads server_metrics_export.csv. Sections start with a
// header whose first cells are Endpoint,Type; info sections
// (Endpoint,Metric,Key,Value) and # comments carry no series and are
// skipped. A cell that is not a finite number under a statistic column is
// left out of that series.
func ReadScrape(r io.Reader) (Scrape, error) {
	sc := bufio.NewScanner(io.LimitReader(r, maxScrapeBytes+1))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	out := Scrape{}
	var header []string
	read := 0
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		read += len(sc.Bytes()) + 1
		if read > maxScrapeBytes {
			return nil, fmt.Errorf("larger than %d MiB", maxScrapeBytes>>20)
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cells := splitCSVLine(line)
		if cells[0] == "Endpoint" {
			header = nil
			if len(cells) > 1 && cells[1] == "Type" {
				header = cells
			}
			continue
		}
		if header == nil {
			continue
		}
		s := ScrapeSeries{Endpoint: cells[0], Labels: map[string]string{}, Stats: map[string]float64{}}
		for i, col := range header {
			if i >= len(cells) || cells[i] == "" || nonLabelColumns[col] {
				continue
			}
			if statColumn.MatchString(col) {
				if v, err := strconv.ParseFloat(strings.TrimSpace(cells[i]), 64); err == nil && schema.Finite(v) {
					s.Stats[col] = v
				}
				continue
			}
			s.Labels[col] = cells[i]
		}
		metric := ""
		if len(cells) > 2 {
			metric = cells[2]
		}
		out[metric] = append(out[metric], s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// splitCSVLine splits one CSV line: double quotes group, "" is a quote.
func splitCSVLine(line string) []string {
	var cells []string
	var cell strings.Builder
	quoted := false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quoted && ch == '"' && i+1 < len(line) && line[i+1] == '"':
			cell.WriteByte('"')
			i++
		case ch == '"':
			quoted = !quoted
		case ch == ',' && !quoted:
			cells = append(cells, cell.String())
			cell.Reset()
		default:
			cell.WriteByte(ch)
		}
	}
	return append(cells, cell.String())
}

var (
	counterKeys = []string{"total", "sum", "max", "avg"}
	gaugeKeys   = []string{"max", "avg", "total"}
)

func seriesStat(s ScrapeSeries, keys []string) (float64, bool) {
	for _, k := range keys {
		if v, ok := s.Stats[k]; ok {
			return v, true
		}
	}
	return 0, false
}

// optional is a value that may be unknown.
type optional struct {
	v  float64
	ok bool
}

func some(v float64) optional { return optional{v, true} }

// sum adds one counter statistic over every series of the named metrics;
// unknown when no series has one.
func (s Scrape) sum(names ...string) optional {
	var out optional
	for _, n := range names {
		for _, series := range s[n] {
			if v, ok := seriesStat(series, counterKeys); ok {
				out = some(out.v + v)
			}
		}
	}
	return out
}

// gaugeMax is the largest gauge statistic over every series of the named
// metrics; gaugeMean their mean (keys avg, max, total in that order).
func (s Scrape) gaugeMax(names ...string) optional {
	var out optional
	for _, n := range names {
		for _, series := range s[n] {
			if v, ok := seriesStat(series, gaugeKeys); ok && (!out.ok || v > out.v) {
				out = some(v)
			}
		}
	}
	return out
}

func (s Scrape) gaugeMean(names ...string) optional {
	var total float64
	n := 0
	for _, name := range names {
		for _, series := range s[name] {
			if v, ok := seriesStat(series, []string{"avg", "max", "total"}); ok {
				total += v
				n++
			}
		}
	}
	if n == 0 {
		return optional{}
	}
	return some(total / float64(n))
}

// sumByLabel adds counter totals per value of one label.
func (s Scrape) sumByLabel(name, label string) map[string]float64 {
	out := map[string]float64{}
	for _, series := range s[name] {
		k, hasLabel := series.Labels[label]
		v, ok := seriesStat(series, counterKeys)
		if hasLabel && ok {
			out[k] += v
		}
	}
	return out
}

// ratio is num/den, unknown unless both are known and den > 0.
func ratio(num, den optional) optional {
	if !num.ok || !den.ok || !(den.v > 0) {
		return optional{}
	}
	return some(num.v / den.v)
}

// fraction turns a gauge exported as 0..100 into 0..1.
func fraction(v optional) optional {
	if v.ok && v.v > 1.5 {
		v.v /= 100
	}
	return v
}

func (o optional) or(b optional) optional {
	if o.ok {
		return o
	}
	return b
}
