package telemetry

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/inferencex/ingest/schema"
)

type cellState int

const (
	cellOK        cellState = iota
	cellNull                // a sentinel: "[N/A]", "N/A", "[Not Supported]", empty
	cellBad                 // not a number
	cellNonFinite           // a number, but NaN, ±Inf or beyond float64
)

// Sentinels and invalid values, the same for nvidia-smi, amd-smi and DCGM:
//
//   - A sentinel — an empty cell, "N/A", "[N/A]" (nvidia-smi also
//     "[Not Supported]" and any other bracketed word) — is "no value":
//     the metric is null, and a row whose power is a sentinel is dropped
//     and counted (Facts.Dropped), as the reference does.
//   - A number that is not finite (NaN, ±Inf, an overflow such as 1e400)
//     is no sentinel: as power it fails the file ("line N: non-finite
//     power"). Every other metric is stored in a real (float32) column:
//     a value that is not finite or beyond float32's range (1e308) fails
//     the file ("line N: field temperature.gpu out of range (1e308)"),
//     never stored as ±Infinity or null.
//   - A finite power outside [0, MaxPowerW] is physically impossible and
//     fails the file ("line N: impossible power").
//
// A wrong number in the database is worse than a missing one: a file with
// one impossible power would corrupt its series' energy and averages, so
// it yields no series at all.

// MaxPowerW is the largest board power one GPU may report, in watts. The
// largest accelerators sampled here draw about 1.4 kW (GB300, MI355X);
// 5 kW leaves room for any part to come and still rejects a corrupt
// reading (1e30 W) before it reaches a series' energy.
const MaxPowerW = 5000

// checkPower returns why a parsed power value is impossible, or "".
func checkPower(v float64) string {
	switch {
	case !schema.Finite(v):
		return fmt.Sprintf("non-finite power %v", v)
	case v < 0:
		return fmt.Sprintf("impossible power %v W (negative)", v)
	case v > MaxPowerW:
		return fmt.Sprintf("impossible power %v W (above the %d W bound per GPU)", v, MaxPowerW)
	}
	return ""
}

// Sample time bounds. A sample before MinSampleTime (2015-01-01 UTC, years
// before any collector here existed) or after Options.NotAfter is
// impossible; so is one further than MaxSpan from the file's first sample.
// Per GPU (and, for DCGM, per host) a sample may come earlier than the
// latest one before it by at most BackwardTolerance (clock adjustments,
// reordered scrapes: such samples are put in time order), and may follow
// it by at most MaxGap — 600 intervals of the 1 s collectors, far beyond
// a stalled nvidia-smi or a slow scrape. Anything else fails the file: one
// line from another hour or day would stretch the series' span, energy
// and average power.
const (
	MinSampleTime     = int64(1420070400) * 1e6 // 2015-01-01T00:00:00Z, µs
	MaxSpan           = 7 * 24 * time.Hour
	MaxGap            = 10 * time.Minute
	BackwardTolerance = 2 * time.Second
)

// TextProblem returns why a string read from a file cannot be stored as
// PostgreSQL text, or "": not UTF-8, or holding NUL or another control
// character.
func TextProblem(s string) string {
	if !utf8.ValidString(s) {
		return "not valid UTF-8"
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "contains a NUL or control character"
	}
	return ""
}

// fmtMicros shows a sample time.
func fmtMicros(us int64) string {
	return time.UnixMicro(us).UTC().Format("2006-01-02T15:04:05.000Z")
}

// parseUnitFloat reads an nvidia-smi cell: a number, optionally followed
// by a unit ("187.80 W", "1965 MHz", "0 %").
func parseUnitFloat(s string) (float64, cellState) {
	s = strings.TrimSpace(s)
	if s == "" || s == "N/A" || (len(s) >= 2 && s[0] == '[' && s[len(s)-1] == ']') {
		return 0, cellNull
	}
	if i := strings.IndexByte(s, ' '); i > 0 {
		s = s[:i]
	}
	if v, ok := fastDecimal(s); ok {
		return v, cellOK
	}
	v, err := strconv.ParseFloat(s, 64)
	if errors.Is(err, strconv.ErrRange) {
		if schema.Finite(v) {
			return v, cellOK // an underflow: 0
		}
		return v, cellNonFinite
	}
	if err == nil && !schema.Finite(v) {
		return v, cellNonFinite
	}
	if err != nil {
		return 0, cellBad
	}
	return v, cellOK
}

// parseGPUIndex reads a non-negative integer index.
func parseGPUIndex(s string) (int16, bool) {
	s = strings.TrimSpace(s)
	if len(s) > 5 {
		return 0, false
	}
	n, ok := digits(s)
	if !ok || n > math.MaxInt16 {
		return 0, false
	}
	return int16(n), true
}

func floatGPUIndex(v float64) (int16, bool) {
	if !schema.Finite(v) || v < 0 || v > math.MaxInt16 || v != math.Trunc(v) {
		return 0, false
	}
	return int16(v), true
}

// parseNVIDIATime reads "YYYY/MM/DD HH:MM:SS[.fff…]" (a wall-clock time,
// no zone) into microseconds since the epoch as if it were UTC. Other
// layouts (ISO-8601, epoch numbers) are accepted through the slow path.
func parseNVIDIATime(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if len(s) >= 19 && s[4] == '/' && s[7] == '/' && s[10] == ' ' && s[13] == ':' && s[16] == ':' {
		y, ok1 := digits(s[0:4])
		mo, ok2 := digits(s[5:7])
		d, ok3 := digits(s[8:10])
		h, ok4 := digits(s[11:13])
		mi, ok5 := digits(s[14:16])
		sec, ok6 := digits(s[17:19])
		if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 {
			return 0, false
		}
		var us int64
		if len(s) > 19 {
			if s[19] != '.' || len(s) == 20 || len(s) > 26 {
				return 0, false
			}
			frac := s[20:]
			f, ok := digits(frac)
			if !ok {
				return 0, false
			}
			for i := len(frac); i < 6; i++ {
				f *= 10
			}
			us = int64(f)
		}
		days := daysFromCivil(y, mo, d)
		return ((days*24+int64(h))*60+int64(mi))*60*1e6 + int64(sec)*1e6 + us, true
	}
	return parseEpochOrISO(s, 0)
}

// parseEpochOrISO reads epoch seconds, epoch milliseconds (> 1e12) or an
// ISO-8601 time (naive = local at offset) into microseconds UTC. Values at
// or below 1e9 seconds are rejected: they are relative times, not epochs.
func parseEpochOrISO(s string, offset time.Duration) (int64, bool) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if !schema.Finite(v) || v <= 1e9 || v >= 1e15 { // 1e15 ms is year 33658
			return 0, false
		}
		if v > 1e12 {
			return roundInt(v) * 1000, true
		}
		return roundInt(v*1000) * 1000, true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		if layout != time.RFC3339Nano {
			t = t.Add(-offset)
		}
		return t.UnixMicro(), true
	}
	return 0, false
}

func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, len(s) > 0
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d
// (proleptic Gregorian; Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// ParseUTCOffset reads a collector time-zone offset: "UTC"/"Z", "±HH:MM"
// or "±HHMM". Anything else is not an offset.
func ParseUTCOffset(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	switch strings.ToUpper(s) {
	case "UTC", "Z", "GMT":
		return 0, true
	}
	if len(s) < 5 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	rest := strings.Replace(s[1:], ":", "", 1)
	if len(rest) != 4 {
		return 0, false
	}
	h, ok1 := digits(rest[:2])
	m, ok2 := digits(rest[2:])
	if !ok1 || !ok2 || h > 23 || m > 59 {
		return 0, false
	}
	d := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute
	if s[0] == '-' {
		d = -d
	}
	return d, true
}

// fitsReal reports whether v can be stored in a PostgreSQL real column
// as the number it is: finite and within float32's range.
func fitsReal(v float64) bool { return schema.Finite(v) && math.Abs(v) <= math.MaxFloat32 }

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func roundInt(v float64) int64 { return int64(math.Round(v)) }

// pow10 are the exactly representable powers of ten.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// fastDecimal parses a plain decimal ("123", "-4.56") of at most 15
// digits: mantissa and power of ten are exact, so one division rounds
// correctly (the same fast path strconv takes). Anything else is left to
// strconv.
func fastDecimal(s string) (float64, bool) {
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg, s = true, s[1:]
	}
	if len(s) == 0 {
		return 0, false
	}
	var mant uint64
	digitsSeen, frac := 0, -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digitsSeen++
			if frac >= 0 {
				frac++
			}
		case c == '.' && frac < 0:
			frac = 0
		default:
			return 0, false
		}
	}
	if digitsSeen == 0 || digitsSeen > 15 {
		return 0, false
	}
	v := float64(mant)
	if frac > 0 {
		v /= pow10[frac]
	}
	if neg {
		v = -v
	}
	return v, true
}
