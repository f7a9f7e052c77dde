package schema

import (
	"crypto/sha256"
)

// EvalResult is one normalized eval row: a task of one config at one
// concurrency. Its natural key within a run is (Config, Task, ISL, OSL,
// Conc), absent values equal to each other.
type EvalResult struct {
	Config        Config  `json:"config"`
	Task          string  `json:"task"`
	ISL           *int    `json:"isl"`
	OSL           *int    `json:"osl"`
	Conc          *int    `json:"conc"`
	LMEvalVersion *string `json:"lm_eval_version"`
	// Metrics hold float64 scores and the string score_name.
	Metrics map[string]any `json:"metrics"`
}

// Key is the natural key of the row within its run, as one string.
func (e *EvalResult) Key() string {
	return jsonStrings(e.Config.keyParts(e.Task, optInt(e.ISL), optInt(e.OSL), optInt(e.Conc)))
}

// EvalKey identifies an eval row within one ingest (a hash of its Key); its
// samples name it.
type EvalKey [16]byte

// KeyHash is the EvalKey of the row: the first 16 bytes of sha256(Key()).
func (e *EvalResult) KeyHash() EvalKey {
	sum := sha256.Sum256([]byte(e.Key()))
	var k EvalKey
	copy(k[:], sum[:16])
	return k
}

// EvalSamplesFile is a samples file whose every line was staged for an eval
// row: a rerun that finds the same digest skips the file.
type EvalSamplesFile struct {
	Eval   EvalKey
	File   string
	Digest [32]byte
	Lines  int
}

// StagedEval is an eval row on its way to the store: the one description
// of its key that won (per-config directories before the aggregate).
type StagedEval struct {
	Result EvalResult
	Key    EvalKey
	Source Provenance
}

// EvalText is a deduplicated text samples reference: a document, a prompt
// or the raw model outputs, keyed by sha256(kind NUL content).
type EvalText struct {
	Kind    string
	Digest  [32]byte
	Content string
}

// StagedEvalSample is one (document, filter) line of a samples file. A
// text is sent with its content the first time the ingest meets it, and by
// digest only afterwards (Sent).
type StagedEvalSample struct {
	Eval          EvalKey
	DocID         int
	Filter        string
	Doc           *EvalText
	Prompt        *EvalText
	Resps         *EvalText
	DocSent       bool
	PromptSent    bool
	RespsSent     bool
	Target        *string
	Response      *string
	Score         *float64
	Passed        *bool
	Metrics       []byte
	FilteredResps []byte
	Data          []byte
	File          string
	Line          int
}

// EvalApplyResult is what the store learned writing a run's evals.
type EvalApplyResult struct {
	Staged         int64
	New            int64
	Duplicate      int64
	Updated        int64
	SamplesStaged  int64
	SamplesNew     int64
	SampleTextsNew int64
	// SamplesFilesRecorded: samples files whose digest was stored or changed.
	SamplesFilesRecorded int64
	// SamplesReplaced: stored samples dropped because their row's samples
	// file changed (its new lines are counted in SamplesNew).
	SamplesReplaced int64
}

// ChangelogRow is one changelog entry to store for a run.
type ChangelogRow struct {
	MergeRunID       int64
	MergeRunAttempt  int
	MergeRunURL      string
	BaseRef          string
	HeadRef          string
	Index            int
	ConfigKeys       []string
	Description      string
	PRLink           *string
	EvalsOnly        bool
	AllEvals         bool
	AppendOnly       bool
	EvalMinPrefillEP *int
	ScenarioTypes    []string
	Fallback         bool
	SourceArtifact   string
	SourceFile       string
}
