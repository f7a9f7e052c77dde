package benchmark

import "github.com/inferencex/ingest/schema"

// ResolveConfig resolves only the deployment a row names — model, hardware,
// framework, precision, spec method and topology — to the 17-column config
// a benchmark row of that deployment gets. Rows of other kinds (evals) use
// it so they land on the same configs row as the benchmarks. agentic
// selects the AgentX topology rules. The outcome is OK, Unmapped (with every
// unresolved value) or Failed (a bad topology value).
func (n *Normalizer) ResolveConfig(row map[string]any, agentic bool) (schema.Config, Outcome) {
	cfg, fwDisagg, o := n.resolveDimensions(row)
	if o != nil {
		return schema.Config{}, *o
	}
	topo, err := resolveTopology(row, cfg.Framework, fwDisagg, agentic)
	if err != nil {
		return schema.Config{}, failed("%v", err)
	}
	topo.Hardware, topo.Framework, topo.Model = cfg.Hardware, cfg.Framework, cfg.Model
	topo.Precision, topo.SpecMethod = cfg.Precision, cfg.SpecMethod
	return topo, Outcome{Kind: OK}
}
