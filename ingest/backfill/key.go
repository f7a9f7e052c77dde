package backfill

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// Params are the parameters that make a backfill what it is. Workers with
// equal Params share a pass.
type Params struct {
	Repo     string `json:"repo"`
	Source   string `json:"source"`
	Workflow string `json:"workflow,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Since    string `json:"since,omitempty"`
	Until    string `json:"until,omitempty"`
	// RunsFile is the digest of the sorted run ids of a --runs file.
	RunsFile string `json:"runsFile,omitempty"`
	// Dir is the absolute directory of a --from-dir backfill.
	Dir string `json:"dir,omitempty"`
	// Mapping is a digest of the alias-table and run-override extension
	// files: after a mapping change, a backfill is a new pass, not the
	// resumption of one that settled runs under the old mapping.
	Mapping  string `json:"mapping,omitempty"`
	Reingest bool   `json:"reingest"`
}

// Spec is the pass specification of p: its key is a digest of p with the
// repository in lower case (GitHub names are case-insensitive).
func (p Params) Spec() (schema.BackfillSpec, error) {
	readable, err := json.Marshal(p)
	if err != nil {
		return schema.BackfillSpec{}, err
	}
	k := p
	k.Repo = strings.ToLower(k.Repo)
	canon, err := json.Marshal(k)
	if err != nil {
		return schema.BackfillSpec{}, err
	}
	sum := sha256.Sum256(canon)
	return schema.BackfillSpec{Key: hex.EncodeToString(sum[:16]), Repo: p.Repo, Params: readable, Reingest: p.Reingest}, nil
}
