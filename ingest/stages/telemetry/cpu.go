package telemetry

import (
	"crypto/sha256"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/inferencex/ingest/ingest/source"
	tel "github.com/inferencex/ingest/ingest/telemetry"
)

// cpuSamplesSuffix and cpuManifestName: the CPU-side (Grace) power leg of a
// multinode power bundle, beside its GPU samples (docs/formats.md,
// "CPU-side power").
const (
	cpuSamplesSuffix = "power/cpu/samples.csv"
	cpuManifestName  = "cpu_manifest.json"
)

// cpuFile is one CPU-side samples file of a power bundle.
type cpuFile struct {
	artifact *source.Artifact
	path     string
}

// planCPU notes the CPU-side samples of a power_audit_ artifact the stage
// reads.
func (st *telemetryStage) planCPU(a *source.Artifact) {
	for _, f := range a.Files {
		if f == cpuSamplesSuffix || strings.HasSuffix(f, "/"+cpuSamplesSuffix) {
			st.cpu = append(st.cpu, cpuFile{artifact: a, path: f})
		}
	}
}

// cpuSide reads the CPU-side samples best effort: the producer has
// integrated them into the points' published metrics already (stored
// with the benchmark rows, as the reference stores them), so the files
// are checked and counted, never stored and never a failure — a required
// power run never fails because of them. A file refused, or without its
// cpu_manifest.json object, is named in a note.
func (st *telemetryStage) cpuSide() {
	d := &st.counts.Details
	for _, c := range st.cpu {
		a := c.artifact
		rec := st.record(a)
		refuse := func(reason string) {
			d.CPUPowerFilesRefused++
			st.env.Tally.Note(fmt.Sprintf("CPU-side power not read (best effort, the run is not failed): artifact %s: file %s: %s", a.Name, c.path, reason))
		}
		fsys, err := st.fsOf(a)
		if err != nil {
			refuse(err.Error())
			continue
		}
		f, err := fsys.Open(c.path)
		if err != nil {
			refuse(fmt.Sprintf("cannot open: %v", err))
			continue
		}
		h := sha256.New()
		cr := &countingReader{r: io.TeeReader(f, h)}
		samples, err := tel.ReadCPUSamples(cr)
		if err == nil {
			_, err = io.Copy(io.Discard, cr)
		}
		f.Close()
		if err != nil {
			refuse(err.Error())
			continue
		}
		var sum [sha256.Size]byte
		h.Sum(sum[:0])
		rec.AddFile(c.path, sum, cr.n)
		d.FilesRead++
		d.BytesRead += cr.n
		d.CPUPowerFilesRead++
		d.CPUPowerSampleRows += samples.Rows
		manifest := path.Join(path.Dir(c.path), cpuManifestName)
		if !hasFile(a, manifest) {
			st.env.Tally.Note(fmt.Sprintf("CPU-side power: artifact %s: file %s: no %s beside it", a.Name, c.path, cpuManifestName))
		} else if jsonObject(fsys, manifest) == nil {
			st.env.Tally.Note(fmt.Sprintf("CPU-side power: artifact %s: file %s: not a JSON object", a.Name, manifest))
		}
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
