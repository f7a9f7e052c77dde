package trace

import "strings"

// DatasetSlug is the replayed dataset of an AgentX benchmark row (one run
// replays one dataset; docs/formats.md, "AgentX traces, server logs and
// datasets"): for a public dataset, the last path segment of
// hf_dataset_name ("semianalysisai/cc-traces-weka-062126" →
// "cc-traces-weka-062126"), NUL characters dropped and invalid UTF-8
// replaced. ok is false when the row names none.
func DatasetSlug(row map[string]any) (string, bool) {
	ds, _ := row["dataset"].(map[string]any)
	if ds == nil {
		return "", false
	}
	if st, _ := ds["source_type"].(string); st != "public_dataset" {
		return "", false
	}
	name, _ := ds["hf_dataset_name"].(string)
	name = strings.TrimRight(strings.TrimSpace(name), "/")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	// The slug is stored as text: no NUL, no invalid UTF-8.
	name = strings.TrimSpace(clean(name))
	return name, name != ""
}
