package perf

import (
	"slices"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// stageFinished is the message the pipeline logs at Info as each stage of
// a run ends, with the fields stage (its name) and took (its wall time).
// The bench reads stage times from these lines, in process (withStageTimes)
// and from `ingest load`'s JSON log (-processes), so the shipped code
// carries no hook of its own for the bench.
const stageFinished = "stage finished"

// withStageTimes is log that also hands record every stage time the
// pipeline logs, whatever log's own level.
func withStageTimes(log *zap.Logger, record func(stage string, took time.Duration)) *zap.Logger {
	if log == nil {
		log = zap.NewNop()
	}
	return log.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return zapcore.NewTee(c, &stageTimes{record: record})
	}))
}

// stageTimes is a zap core that writes nothing: it passes each
// stageFinished entry's stage and took fields to record.
type stageTimes struct {
	fields []zapcore.Field
	record func(stage string, took time.Duration)
}

func (c *stageTimes) Enabled(l zapcore.Level) bool { return l >= zapcore.InfoLevel }

func (c *stageTimes) With(fields []zapcore.Field) zapcore.Core {
	return &stageTimes{fields: append(slices.Clip(c.fields), fields...), record: c.record}
}

func (c *stageTimes) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Message == stageFinished && c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *stageTimes) Write(_ zapcore.Entry, fields []zapcore.Field) error {
	stage, took, ok := "", time.Duration(0), false
	for _, f := range slices.Concat(c.fields, fields) {
		switch {
		case f.Key == "stage" && f.Type == zapcore.StringType:
			stage = f.String
		case f.Key == "took" && f.Type == zapcore.DurationType:
			took, ok = time.Duration(f.Integer), true
		}
	}
	if stage != "" && ok {
		c.record(stage, took)
	}
	return nil
}

func (c *stageTimes) Sync() error { return nil }
