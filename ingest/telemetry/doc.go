// Package telemetry reads GPU telemetry CSVs — nvidia-smi, amd-smi and the
// multinode DCGM samples.csv of srt-slurm's dcgm-power bundle
// (docs/formats.md, "Telemetry: GPU metrics and power") — as streamed Arrow record batches, and computes
// the facts of each series: GPU count, span, sample interval, energy,
// average and percentile power.
//
// A CSV is never held as rows of strings: the header is read and checked
// first, then arrow-go's CSV reader decodes the body in chunks against an
// explicit schema, and
// each chunk is converted into the canonical sample batch (SampleSchema)
// with typed loops and released. A series is returned whole, so a file that
// fails halfway never yields samples.
package telemetry
