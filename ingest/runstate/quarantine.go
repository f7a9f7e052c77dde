package runstate

import (
	"fmt"

	"github.com/inferencex/ingest/ingest/quarantine"
	"github.com/inferencex/ingest/schema"
)

// ReadQuarantine reads the run's lists of quarantined rows (the
// rejected_rows_* artifacts), before any benchmark or eval file. A list
// that is missing from its artifact or unreadable is an error naming the
// artifact and file: the ingest aborts rather than write rows the producer
// excluded.
func ReadQuarantine(p Plan, records *[]*Record, d *schema.Details) (*quarantine.Lists, error) {
	l := &quarantine.Lists{}
	for _, a := range p.Artifacts(KindRejectedRows) {
		if err := readList(a.Name, l, func() error {
			fsys, err := a.FS()
			rec := NewRecord(a)
			*records = append(*records, rec)
			d.ArtifactsRead++
			if err != nil {
				return err
			}
			defer a.Release()
			defer rec.Seal()
			if len(a.Problems) > 0 {
				return fmt.Errorf("%s: %s", a.Problems[0].File, a.Problems[0].Reason)
			}
			f, err := OpenRecorded(fsys, rec, d)(quarantine.File)
			if err != nil {
				return fmt.Errorf("cannot open: %w", err)
			}
			defer f.Close()
			return l.Read(a.Name, f)
		}); err != nil {
			return nil, err
		}
	}
	d.RejectedRowsListed = int64(l.Benchmark + l.Eval)
	return l, nil
}

// readList names the artifact and file of a list's error.
func readList(artifact string, l *quarantine.Lists, read func() error) error {
	if err := read(); err != nil {
		return fmt.Errorf("%s / %s: unreadable list of quarantined rows: %w", artifact, quarantine.File, err)
	}
	return nil
}
