package runstate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClassify: each artifact name gets its kind, the narrower rule first.
func TestClassify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		want Kind
	}{
		{"bmk_dsr1_1k1k_fp4_b200", KindPerJob},
		{"bmk_agentic_x", KindPerJob},
		{"results_bmk", KindAggregate},
		{"run-stats", KindRunStats},
		{"run_stats", KindRunStats},
		{"run-stats_b200", KindRunStats},
		{"run_stats_b200", KindRunStats},
		{"run-statsx", KindOther},
		{"eval_results_all", KindEvalAggregate},
		{"eval_server_logs_x", KindOther},
		{"eval_gpu_metrics_x", KindOther},
		{"eval_gsm8k_x", KindEval},
		{"changelog-metadata", KindChangelog},
		{"changelog-metadata-2", KindOther},
		{"reused-ingest-metadata", KindReuse},
		{"agentic_rf1", KindAgenticRaw},
		{"server_logs_rf1", KindServerLogs},
		{"multinode_server_logs_rf1", KindServerLogs},
		{"gpu_metrics_rf1", KindGPUMetrics},
		{"power_audit_rf1", KindPowerAudit},
		{"required-power-sweep-manifest", KindPowerManifest},
		{"rejected_rows_dsr1", KindRejectedRows},
		{"rejected_rows_eval_dsr1", KindRejectedRows},
		{"something_else", KindOther},
	} {
		require.Equal(t, tc.want, Classify(tc.name), tc.name)
	}
}

// TestEveryKindHasARule: a kind added without its rule in kindRules
// would never be planned.
func TestEveryKindHasARule(t *testing.T) {
	t.Parallel()
	ruled := map[Kind]bool{}
	for _, r := range kindRules {
		ruled[r.kind] = true
	}
	for k := KindOther + 1; k < numKinds; k++ {
		require.True(t, ruled[k], "kind %d has no rule in kindRules", k)
	}
}
