package perf

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestWithStageTimes: every "stage finished" line reaches record with its
// stage and time, below the logger's own level too, and is still logged
// where the level allows; other lines are not recorded.
func TestWithStageTimes(t *testing.T) {
	core, logged := observer.New(zapcore.WarnLevel)
	got := map[string]time.Duration{}
	log := withStageTimes(zap.New(core), func(stage string, took time.Duration) { got[stage] += took })
	log.Named("pipeline").Info(stageFinished, zap.String("stage", "evals"), zap.Duration("took", 3*time.Second))
	log.With(zap.String("stage", "traces")).Warn(stageFinished, zap.Duration("took", time.Second))
	log.Info("run tree opened", zap.String("stage", "benchmarks"), zap.Duration("took", time.Minute))
	log.Info(stageFinished, zap.String("stage", "curves")) // no time: not a stage line
	require.Equal(t, map[string]time.Duration{"evals": 3 * time.Second, "traces": time.Second}, got)
	require.Equal(t, 1, logged.Len(), "the Warn line is still logged, the Info lines are not")

	nop := map[string]time.Duration{}
	withStageTimes(nil, func(stage string, took time.Duration) { nop[stage] = took }).
		Info(stageFinished, zap.String("stage", "commit"), zap.Duration("took", time.Millisecond))
	require.Equal(t, map[string]time.Duration{"commit": time.Millisecond}, nop)
}
