package catalog

import (
	_ "embed"
	"encoding/json"
	"sync"
)

// datasets.json lists the AgentX datasets the ingest knows by slug (the
// last segment of the Hugging Face id). A run whose rows replay another
// dataset is still ingested; its slug is reported as unmapped.
//
//go:embed datasets.json
var datasetsFile []byte

type datasetEntry struct {
	Slug  string `json:"slug"`
	ID    string `json:"id"`
	Label string `json:"label"`
}

var knownDatasets = sync.OnceValues(func() (map[string]bool, error) {
	var f struct {
		Datasets []datasetEntry `json:"datasets"`
	}
	if err := json.Unmarshal(datasetsFile, &f); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(f.Datasets))
	for _, d := range f.Datasets {
		out[d.Slug] = true
	}
	return out, nil
})

// KnownDataset reports whether a dataset slug is in the embedded list.
func KnownDataset(slug string) (bool, error) {
	m, err := knownDatasets()
	if err != nil {
		return false, err
	}
	return m[slug], nil
}
