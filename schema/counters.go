package schema

import "reflect"

// Every int64 field of Stats and Details says in its `counter` tag what it
// counts, so that merging and resetting counters is one rule, not a list
// of fields to keep in step with the struct (schema's tests fail on a
// field without the tag):
//
//   - "seen": what the run read or decided; a rerun of the same inputs
//     sees it again, so a rerun answered from the ledger keeps it.
//   - "written": what the run's transaction wrote; zero in a rerun
//     answered from the ledger (ZeroWritten), which writes nothing.
//   - "-": not a sum (a duration, an ingest id, a count the tally sets
//     once when it closes); never added.
const counterTag = "counter"

// Add adds o's columns to c's.
func (c *Counts) Add(o Counts) { addCounters(reflect.ValueOf(c).Elem(), reflect.ValueOf(o)) }

// Add adds every row of o to r's.
func (r *Rows) Add(o Rows) { addCounters(reflect.ValueOf(r).Elem(), reflect.ValueOf(o)) }

// Add adds every counter of o to s's.
func (s *Stats) Add(o Stats) { addCounters(reflect.ValueOf(s).Elem(), reflect.ValueOf(o)) }

// Add adds every counter of o (every int64 field not tagged "-") to d's;
// the other fields are left alone.
func (d *Details) Add(o Details) { addCounters(reflect.ValueOf(d).Elem(), reflect.ValueOf(o)) }

// Counters are the counted part of a summary: what a stage or one of its
// workers counts on its own and returns, added to the run's summary with
// AddCounters (only the fields that are counters are added).
type Counters struct {
	Rows    Rows
	Stats   Stats
	Details Details
}

// Counters are s's rows, stats and details.
func (s *Summary) Counters() Counters {
	return Counters{Rows: s.Rows, Stats: s.Stats, Details: s.Details}
}

// AddCounters adds c's rows, stats and details counters to s's.
func (s *Summary) AddCounters(c Counters) {
	s.Rows.Add(c.Rows)
	s.Stats.Add(c.Stats)
	s.Details.Add(c.Details)
}

// ZeroWritten sets every counter tagged "written" to 0.
func (s *Stats) ZeroWritten() { zeroWritten(reflect.ValueOf(s).Elem()) }

// ZeroWritten sets every counter tagged "written" to 0.
func (d *Details) ZeroWritten() { zeroWritten(reflect.ValueOf(d).Elem()) }

// addCounters adds src's int64 fields (and those of its struct fields) to
// dst's, both of the same struct type.
func addCounters(dst, src reflect.Value) {
	t := dst.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case f.Type.Kind() == reflect.Struct:
			addCounters(dst.Field(i), src.Field(i))
		case f.Type.Kind() == reflect.Int64 && f.Tag.Get(counterTag) != "-":
			d := dst.Field(i)
			d.SetInt(d.Int() + src.Field(i).Int())
		}
	}
}

func zeroWritten(v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		if t.Field(i).Tag.Get(counterTag) == "written" {
			v.Field(i).SetInt(0)
		}
	}
}
