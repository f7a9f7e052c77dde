// Package telemetry reads GPU telemetry CSVs — nvidia-smi, amd-smi and the
// multinode DCGM samples.csv of srt-slurm's dcgm-power bundle
// (docs/formats.md, "Telemetry: GPU metrics and power") — as streamed Arrow record batches, and computes
// the facts of each series: GPU count, span, sample interval, energy,
// average and percentile power.
//
// A CSV is never held as rows of strings: the header is read and checked
// first, then the body is streamed one reused row at a time (rows.go: as
// encoding/csv reads it, lines without quotes split directly), and
// each row is converted with typed code into the canonical sample batches
// (SampleSchema). A series is returned whole, so a file that fails halfway
// never yields samples.
package telemetry
