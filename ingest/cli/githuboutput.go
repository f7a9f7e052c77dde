package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/inferencex/ingest/ingest/report"
	"github.com/inferencex/ingest/ingest/store"
	"github.com/inferencex/ingest/schema"
)

// output is one step output for $GITHUB_OUTPUT.
type output struct{ name, value string }

// writeGitHubOutputs appends step outputs to the file GITHUB_OUTPUT names
// (nothing when unset), each in the multi-line form with a delimiter
// derived from its value, so no value can end it early. Outputs are not
// worth failing a committed ingest for: an error is returned for a warning.
func writeGitHubOutputs(env Env, outs []output) error {
	path := env.Getenv("GITHUB_OUTPUT")
	if path == "" {
		return nil
	}
	var b strings.Builder
	for _, o := range outs {
		sum := sha256.Sum256([]byte(o.value))
		delim := "ingest_" + hex.EncodeToString(sum[:12])
		fmt.Fprintf(&b, "%s<<%s\n%s\n%s\n", o.name, delim, o.value, delim)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("GITHUB_OUTPUT: %w", err)
	}
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("GITHUB_OUTPUT: %w", err)
	}
	return nil
}

// targetOutputs name the target and its database (never its URL).
func targetOutputs(c *commonOpts) []output {
	return []output{{"target", c.target.name}, {"database", store.DatabaseName(c.dbURL.String())}}
}

// ingestOutputs are the outputs of an ingest (load, run, demo): what a
// workflow's callback needs to say what happened, and where.
func ingestOutputs(c *commonOpts, sum *schema.Summary, code int) []output {
	outs := append(targetOutputs(c), output{"exit-code", strconv.Itoa(code)})
	if sum == nil {
		return append(outs, output{"status", "not started"})
	}
	headline, _, _ := strings.Cut(report.Text(sum), "\n")
	outs = append(outs,
		output{"run-id", strconv.FormatInt(sum.Run.SourceRunID, 10)},
		output{"attempt", strconv.Itoa(sum.Run.SourceRunAttempt)},
		output{"merge-run-id", strconv.FormatInt(sum.Run.MergeRunID, 10)},
		output{"ingest-id", strconv.FormatInt(sum.IngestID, 10)},
		output{"status", string(sum.Status)},
		output{"dry-run", strconv.FormatBool(sum.DryRun)},
		output{"headline", headline},
		output{"benchmark-new", strconv.FormatInt(sum.Rows.Benchmark.New, 10)},
		output{"failures", strconv.FormatInt(sum.FailureCount(), 10)},
	)
	kind, same, staged := "", "", ""
	if p := sum.Publication; p != nil {
		kind = p.Kind
		if p.Kind == schema.PublicationPromotion && p.NotCompared == "" {
			same = strconv.FormatBool(p.SameInputs)
			staged = strconv.FormatInt(p.StagedIngestID, 10)
		}
	}
	return append(outs, output{"publication", kind}, output{"same-inputs", same}, output{"staged-ingest-id", staged})
}
