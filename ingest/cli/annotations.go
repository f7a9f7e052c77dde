package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/inferencex/ingest/schema"
)

// maxAnnotations bounds each kind of annotation: Actions shows only a few
// per step anyway, and the report lists everything.
const maxAnnotations = 50

// writeAnnotations prints GitHub Actions workflow commands: an error per
// failed item and a warning per unmapped value, so they show on the run
// page. Only called when GITHUB_ACTIONS is "true", always with stderr: the
// runner reads workflow commands from both streams, and stdout carries the
// report in its format (JSON must stay JSON).
func writeAnnotations(w io.Writer, sum *schema.Summary) {
	if sum.Status == schema.StatusAborted {
		fmt.Fprintf(w, "::error title=%s::%s\n", escapeProperty("Ingest aborted"), escapeData(sum.AbortReason))
	}
	for i, f := range sum.Failures {
		if i == maxAnnotations {
			fmt.Fprintf(w, "::error title=%s::%s\n", escapeProperty("Ingest failures"), escapeData(fmt.Sprintf("… and %d more failures (see the report)", len(sum.Failures)-i)))
			break
		}
		where := f.Artifact
		if f.File != "" {
			where += " / " + f.File
		}
		fmt.Fprintf(w, "::error title=%s::%s\n", escapeProperty("Ingest failure ("+string(f.Category)+")"), escapeData(where+": "+f.Reason))
	}
	n := 0
	for _, kind := range []struct {
		name   string
		values []string
	}{
		{"model", sum.Unmapped.Models}, {"hardware", sum.Unmapped.Hardware}, {"precision", sum.Unmapped.Precisions},
		{"framework", sum.Unmapped.Frameworks}, {"speculative method", sum.Unmapped.SpecMethods}, {"dataset", sum.Unmapped.Datasets},
	} {
		for _, v := range kind.values {
			if n == maxAnnotations {
				return
			}
			n++
			fmt.Fprintf(w, "::warning title=%s::%s\n", escapeProperty("Unmapped "+kind.name), escapeData(fmt.Sprintf("%s %q is not in the alias tables: its rows were not written", kind.name, v)))
		}
	}
}

// escapeData escapes a workflow command's message.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
