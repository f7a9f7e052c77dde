package telemetry

import (
	"maps"
	"math"
	"slices"
)

// Facts summarise one series. Times are microseconds since the epoch (UTC).
type Facts struct {
	Samples int64 `json:"samples"`
	GPUs    int   `json:"gpus"`
	Start   int64 `json:"start"`
	End     int64 `json:"end"`
	// IntervalS is the median positive gap between consecutive samples of
	// a GPU, in seconds; 0 when no GPU has two samples.
	IntervalS float64 `json:"intervalS"`
	// The window the energy is integrated over: the benchmark window when
	// one is known, else the series span.
	WindowStart  int64  `json:"windowStart"`
	WindowEnd    int64  `json:"windowEnd"`
	WindowSource string `json:"windowSource"`
	// Bracketed: every GPU has a sample at or before the window start and
	// at or after its end; MaxGapS is the largest gap inside the window.
	Bracketed bool    `json:"bracketed"`
	MaxGapS   float64 `json:"maxGapS"`
	// EnergyJ is Σ over GPUs of the trapezoidal integral of power over the
	// window, with the boundary values interpolated.
	EnergyJ        float64 `json:"energyJ"`
	AvgTotalPowerW float64 `json:"avgTotalPowerW"`
	AvgPowerW      float64 `json:"avgPowerW"`
	// P50PowerW, P90PowerW are percentiles of the per-GPU power samples
	// inside the window (linear interpolation at p·(N−1)).
	P50PowerW  float64 `json:"p50PowerW"`
	P90PowerW  float64 `json:"p90PowerW"`
	HasPower   bool    `json:"hasPower"`
	Dropped    int64   `json:"dropped"`
	Duplicates int64   `json:"duplicates"`
}

// computeFacts works on the per-GPU (time, power) tracks of a series.
func computeFacts(gpus map[int16]*gpuTrack, w *Window) Facts {
	var f Facts
	f.GPUs = len(gpus)
	// GPU order, never map order: float sums must not depend on it, or two
	// ingests of one file would store different energies.
	order := slices.Sorted(maps.Keys(gpus))
	first := true
	var gaps []int64
	for _, g := range order {
		t := gpus[g]
		t.sorted()
		n := len(t.ts)
		f.Samples += int64(n)
		if n == 0 {
			continue
		}
		if first || t.ts[0] < f.Start {
			f.Start = t.ts[0]
		}
		if first || t.ts[n-1] > f.End {
			f.End = t.ts[n-1]
		}
		first = false
		for i := 1; i < n; i++ {
			if g := t.ts[i] - t.ts[i-1]; g > 0 {
				gaps = append(gaps, g)
			}
		}
	}
	if len(gaps) > 0 {
		slices.Sort(gaps)
		m := len(gaps) / 2
		med := float64(gaps[m])
		if len(gaps)%2 == 0 {
			med = float64(gaps[m-1]+gaps[m]) / 2
		}
		f.IntervalS = med / 1e6
	}
	f.WindowStart, f.WindowEnd, f.WindowSource = f.Start, f.End, "series"
	if w != nil && w.End > w.Start {
		f.WindowStart, f.WindowEnd, f.WindowSource = w.Start, w.End, w.Source
	}
	ws, we := f.WindowStart, f.WindowEnd
	f.Bracketed = true
	var inWindow []float32
	for _, g := range order {
		t := gpus[g]
		n := len(t.ts)
		if n == 0 || t.ts[0] > ws || t.ts[n-1] < we {
			f.Bracketed = false
		}
		for i := 0; i < n; i++ {
			if t.ts[i] >= ws && t.ts[i] <= we {
				inWindow = append(inWindow, t.power[i])
			}
			if i == 0 {
				continue
			}
			t0, t1 := t.ts[i-1], t.ts[i]
			a, b := max(t0, ws), min(t1, we)
			if a >= b {
				continue
			}
			if g := float64(t1-t0) / 1e6; g > f.MaxGapS {
				f.MaxGapS = g
			}
			p0, p1 := float64(t.power[i-1]), float64(t.power[i])
			pa := p0 + (p1-p0)*float64(a-t0)/float64(t1-t0)
			pb := p0 + (p1-p0)*float64(b-t0)/float64(t1-t0)
			f.EnergyJ += (pa + pb) / 2 * float64(b-a) / 1e6
		}
	}
	if d := float64(we-ws) / 1e6; d > 0 && f.GPUs > 0 {
		f.AvgTotalPowerW = f.EnergyJ / d
		f.AvgPowerW = f.AvgTotalPowerW / float64(f.GPUs)
		f.HasPower = true
	}
	if len(inWindow) > 0 {
		// Selection, not a sort: the two percentiles need four order
		// statistics, found in linear time.
		f.P50PowerW = percentile(inWindow, 0.5)
		f.P90PowerW = percentile(inWindow, 0.9)
	}
	return f
}

// percentile of values, linear interpolation at p·(N−1). It reorders
// values (a partial sort).
func percentile(values []float32, p float64) float64 {
	pos := p * float64(len(values)-1)
	lo := int(math.Floor(pos))
	frac := pos - float64(lo)
	a := float64(nth(values, lo))
	if frac == 0 || lo+1 >= len(values) {
		return a
	}
	b := float64(slices.Min(values[lo+1:]))
	return a + (b-a)*frac
}

// nth reorders v so that v[k] is the value a sort would put there, with
// nothing greater before it and nothing smaller after it, and returns it
// (quickselect with a median-of-three pivot; v holds no NaN).
func nth(v []float32, k int) float32 {
	lo, hi := 0, len(v)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		// median of three to v[mid]
		if v[mid] < v[lo] {
			v[mid], v[lo] = v[lo], v[mid]
		}
		if v[hi] < v[lo] {
			v[hi], v[lo] = v[lo], v[hi]
		}
		if v[hi] < v[mid] {
			v[hi], v[mid] = v[mid], v[hi]
		}
		pivot := v[mid]
		// Hoare partition: v[lo..j] ≤ pivot ≤ v[i..hi].
		i, j := lo, hi
		for i <= j {
			for v[i] < pivot {
				i++
			}
			for v[j] > pivot {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return v[k] // between j and i: equal to the pivot
		}
	}
	return v[k]
}
