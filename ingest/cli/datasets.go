package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferencex/ingest/ingest/catalog"
	"github.com/inferencex/ingest/ingest/weka"
	"github.com/inferencex/ingest/schema"
)

// datasetsCommand loads an agentic trace corpus into the tables the
// dashboard's /datasets pages read: `ingest datasets load FILE --dataset
// ID` reads the corpus file (JSON Lines, one conversation per line, gzip
// or not) and replaces the dataset's conversations, count, summary and
// chart data in one transaction, as the reference's loader does from the
// Hugging Face datasets server.
func (a *app) datasetsCommand() *cobra.Command {
	cmd, s, run := a.command("load FILE --dataset ID", "load a corpus file, replacing the dataset's stored conversations",
		"Read the corpus file (JSON Lines, one conversation per line, gzip or not) and replace the dataset's\n"+
			"conversations, count, summary and chart data in one transaction.", 1)
	o := &datasetOpts{common: addCommon(s)}
	o.common.addNoMigrate(s)
	o.id = s.str("dataset", "", "the Hugging Face id of the corpus, e.g. semianalysisai/cc-traces-weka-062126 (required)", "INGEST_DATASET")
	o.label = s.str("label", "", "label (default: the catalogue's, else from the slug as the reference makes it)", "INGEST_DATASET_LABEL")
	o.variant = s.str("variant", "", "variant: full, 256k, no-subagents (default: the catalogue's, else from the slug)", "INGEST_DATASET_VARIANT")
	o.description = s.str("description", "", "description (default: keep the stored one)", "INGEST_DATASET_DESCRIPTION")
	o.limit = s.intIn("limit", "0", 0, math.MaxInt32, "read at most this many conversations (0: all)", "INGEST_DATASET_LIMIT")
	run(func(ctx context.Context, args []string) int {
		if len(args) != 1 {
			fmt.Fprintln(a.env.Stderr, "ingest datasets load: name the corpus file")
			return ExitUsage
		}
		return runDatasets(ctx, a.env, o, args[0])
	})
	return a.group("datasets", "load an agentic trace corpus for the /datasets pages: ingest datasets load FILE --dataset ID", cmd)
}

// datasetOpts are the options of datasets load.
type datasetOpts struct {
	common                                 *commonOpts
	id, label, variant, description, limit *setting
}

func runDatasets(ctx context.Context, env Env, o *datasetOpts, path string) int {
	common, id, label, variant, description := o.common, o.id, o.label, o.variant, o.description
	n := int(o.limit.int64())
	row, err := datasetRow(id.String(), label.String(), variant.String(), description.String())
	if err != nil {
		fmt.Fprintln(env.Stderr, "ingest datasets load:", err)
		return ExitUsage
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(env, "%v", err)
	}
	defer f.Close()
	r, err := weka.NewReader(f, n)
	if err != nil {
		return fail(env, "%s: %v", path, err)
	}
	log, err := newLogger(common, env)
	if err != nil {
		fmt.Fprintln(env.Stderr, "ingest:", err)
		return ExitUsage
	}
	defer log.Sync()
	st, err := openStore(ctx, common, log, true)
	if err != nil {
		return failOpen(env, err)
	}
	defer st.Close()
	next := func() (schema.DatasetConversation, bool, error) {
		c, err := r.Next()
		if errors.Is(err, io.EOF) {
			return schema.DatasetConversation{}, false, nil
		}
		if err != nil {
			return schema.DatasetConversation{}, false, fmt.Errorf("%s: %w", path, err)
		}
		structure, err := json.Marshal(c.Structure)
		if err != nil {
			return schema.DatasetConversation{}, false, fmt.Errorf("%s: conversation %s: %w", path, c.ConvID, err)
		}
		t := c.Structure.Totals
		return schema.DatasetConversation{ConvID: c.ConvID, Models: c.Models, NumTurns: t.NumTurns,
			NumSubagentGroups: t.NumSubagentGroups, TotalIn: int64(t.In), TotalOut: int64(t.Out), TotalCached: int64(t.Cached),
			Structure: structure}, true, nil
	}
	load := schema.DatasetLoad{Row: row, Finish: func() (int, []byte, []byte, error) {
		tot := r.Totals()
		summary, err := json.Marshal(tot.Summary())
		if err != nil {
			return 0, nil, nil, err
		}
		chart, err := json.Marshal(tot.ChartData())
		return tot.Conversations, summary, chart, err
	}}
	written, replaced, err := st.LoadDataset(ctx, load, next)
	if err != nil {
		return fail(env, "dataset %s not loaded (nothing was written): %v", row.ID, err)
	}
	fmt.Fprintf(env.Stdout, "dataset %s (%s): %d conversations loaded from %s, %d replaced\n", row.ID, row.Slug, written, path, replaced)
	return ExitOK
}

// datasetRow is the dataset's row: the catalogue's values when it lists
// the slug, else the reference loader's (label and variant from the slug,
// license apache-2.0); flags win.
func datasetRow(id, label, variant, description string) (schema.DatasetRow, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return schema.DatasetRow{}, errors.New("--dataset is required (the corpus's Hugging Face id)")
	}
	slug := id
	if i := strings.IndexByte(id, '/'); i >= 0 {
		slug = id[i+1:]
	}
	d, known, err := catalog.LookupDataset(slug)
	if err != nil {
		return schema.DatasetRow{}, err
	}
	if !known {
		d = catalog.Dataset{Slug: slug, Label: defaultDatasetLabel(slug), License: "apache-2.0"}
	}
	d.ID = id
	if label != "" {
		d.Label = label
	}
	if variant != "" {
		d.Variant = variant
	}
	return schema.DatasetRow{ID: id, Slug: slug, Label: d.Label, Variant: d.VariantName(), Description: description,
		HFURL: d.HFURL(), License: d.License}, nil
}

// defaultDatasetLabel is the reference loader's label of a slug: its
// dash-separated parts upper-cased (numbers kept), a leading "CC TRACES
// WEKA" written "CC Traces Weka" (cc-traces-weka-062126 → CC Traces Weka
// 062126).
func defaultDatasetLabel(slug string) string {
	parts := strings.Split(slug, "-")
	digits := func(p string) bool {
		return p != "" && strings.Trim(p, "0123456789") == ""
	}
	for i, p := range parts {
		if !digits(p) {
			parts[i] = strings.ToUpper(p)
		}
	}
	l := strings.Join(parts, " ")
	if rest, ok := strings.CutPrefix(l, "CC TRACES WEKA"); ok {
		l = "CC Traces Weka" + rest
	}
	return l
}
