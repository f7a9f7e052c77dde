package compare

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/inferencex/ingest/ingest"
	"github.com/inferencex/ingest/ingest/source"
	"github.com/inferencex/ingest/ingest/trace"
	"github.com/inferencex/ingest/schema"
)

// Run reads tree as `ingest load` would (cfg and d as for ingest.Run;
// d.Store is not used) and compares it with what the database conn points
// at holds for the run: cfg.Run's id and attempt when set, else the
// tree's.
func Run(ctx context.Context, cfg ingest.Config, tree *source.Tree, d ingest.Deps, conn *pgx.Conn) (*Result, error) {
	c := &capture{}
	sh, err := ingest.ReadShadow(ctx, cfg, tree, d, c)
	if err != nil {
		return nil, fmt.Errorf("read the run tree: %w", err)
	}
	id, attempt := sh.Start.Run.SourceRunID, sh.Start.Run.SourceRunAttempt
	t, err := readTarget(ctx, conn, id, attempt)
	if err != nil {
		return nil, err
	}
	ours := oursSide(sh, c)
	keyChangelog(t, ours)
	nameLogs(t, ours)
	dropTraceFields(ours, t.schema)
	dropTraceFields(t.rows, t.schema)
	dropTraceDerived(ours, t.schema)
	dropTraceDerived(t.rows, t.schema)
	res := &Result{RunID: id, Attempt: attempt, Schema: t.schema, Level: t.level, Rows: map[string][2]int{},
		Differences: diff(ours, t.rows, t.schema)}
	for _, tb := range tables {
		res.Rows[tb] = [2]int{len(ours[tb]), len(t.rows[tb])}
	}
	if res.Differences == nil {
		res.Differences = []Difference{}
	}
	return res, nil
}

// keyChangelog keys the database's changelog rows. A reference row (no
// entry index) is the last entry of its refs that survived the
// reference's upsert: it takes the index of our last entry of those refs.
func keyChangelog(t *target, ours side) {
	last := map[string]int{}
	for k, r := range ours[TableChangelog] {
		var i int
		fmt.Sscanf(k[len(r.group)+2:], "%d", &i)
		if j, ok := last[r.group]; !ok || i > j {
			last[r.group] = i
		}
	}
	for _, c := range t.changelog {
		group := c.base + ".." + c.head
		i := c.index
		if i < 0 {
			i = last[group]
		}
		t.rows.put(TableChangelog, changelogKey(c.base, c.head, i), &row{group: group, values: c.values})
	}
}

// dropTraceDerived removes from AgentX rows the metrics the traces stage
// derives from the raw trace files, which a compare does not read (the
// stage needs the stored rows): the derived_* keys always, and against a
// database of ours the server-metric keys we own (trace.ServerMetricKeys),
// whose stored values are that stage's. Against the reference those keys
// hold the producer's values, which the agentx-server-metrics rule
// explains beside our published_<key> copies.
func dropTraceDerived(s side, schemaKind string) {
	for _, r := range s[TableBenchmarks] {
		if !r.agentx {
			continue
		}
		for f := range r.values {
			if strings.HasPrefix(f, "metrics."+schema.DerivedMetricPrefix) {
				delete(r.values, f)
			}
		}
		if schemaKind == SchemaOurs {
			for _, k := range trace.ServerMetricKeys {
				delete(r.values, "metrics."+k)
			}
		}
	}
}

// nameLogs keys a reference's primary log files of before 013, which have
// no name: under the primary file of the tree's log of the same row, else
// server.log. Such a database keeps no other file.
func nameLogs(t *target, ours side) {
	primaries := map[string]string{}
	for k, r := range ours[TableServerLogs] {
		if r.primary {
			primaries[r.group] = k
		}
	}
	for _, l := range t.unnamedLogs {
		k, ok := primaries[l.bench]
		if !ok {
			k = logKey(l.bench, "server.log")
		}
		t.rows.put(TableServerLogs, k, &row{group: l.bench, primary: true, primaryOnly: true, values: l.values})
	}
}

// dropTraceFields leaves out, against the reference, the trace fields it
// does not keep: the AIPerf JSON and the layout.
func dropTraceFields(s side, schemaKind string) {
	if schemaKind != SchemaReference {
		return
	}
	for _, r := range s[TableTraces] {
		delete(r.values, "profile_aiperf")
		delete(r.values, "layout")
	}
}
