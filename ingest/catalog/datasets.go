package catalog

import (
	_ "embed"
	"encoding/json"
	"strings"
	"sync"
)

// datasets.json lists the AgentX datasets the ingest knows by slug (the
// last segment of the Hugging Face id). A run whose rows replay another
// dataset is still ingested; its slug is reported as unmapped.
//
//go:embed datasets.json
var datasetsFile []byte

// Dataset is one catalogued dataset: the row of the dashboard's datasets
// table a run replaying it gets (docs/dashboard-schema.md).
type Dataset struct {
	Slug        string `json:"slug"`
	ID          string `json:"id"` // the Hugging Face id
	Label       string `json:"label"`
	Variant     string `json:"variant"` // empty: from the slug
	Description string `json:"description"`
	License     string `json:"license"`
}

// VariantName is the published variant: given, else the reference's rule on
// the slug ("-256k" suffix, "no-subagent" in it, else "full").
func (d Dataset) VariantName() string {
	switch {
	case d.Variant != "":
		return d.Variant
	case strings.HasSuffix(d.Slug, "-256k"):
		return "256k"
	case strings.Contains(d.Slug, "no-subagent"):
		return "no-subagents"
	}
	return "full"
}

// HFURL is the dataset's Hugging Face page.
func (d Dataset) HFURL() string { return "https://huggingface.co/datasets/" + d.ID }

var knownDatasets = sync.OnceValues(func() (map[string]Dataset, error) {
	var f struct {
		Datasets []Dataset `json:"datasets"`
	}
	if err := json.Unmarshal(datasetsFile, &f); err != nil {
		return nil, err
	}
	out := make(map[string]Dataset, len(f.Datasets))
	for _, d := range f.Datasets {
		out[d.Slug] = d
	}
	return out, nil
})

// LookupDataset is the catalogued dataset of a slug.
func LookupDataset(slug string) (Dataset, bool, error) {
	m, err := knownDatasets()
	if err != nil {
		return Dataset{}, false, err
	}
	d, ok := m[slug]
	return d, ok, nil
}
