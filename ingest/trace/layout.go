package trace

import (
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Raw sibling layouts: where the AIPerf exports sit inside agentic_<suffix>
// (docs/formats.md, "AgentX traces, server logs and datasets").
const (
	LayoutSingleNode = "single-node"
	LayoutMultinode  = "multinode"
	LayoutNested     = "nested"
)

// Sidecar file names inside an AIPerf artifacts directory.
const (
	ProfileExport     = "profile_export.jsonl"
	ProfileAIPerfJSON = "profile_export_aiperf.json"
	ServerMetricsJSON = "server_metrics_export.json"
	ServerMetricsCSV  = "server_metrics_export.csv"
)

// Files are the located sidecar files of one point, as paths inside the raw
// artifact; empty when absent. Profile is always set.
type Files struct {
	Layout      string
	Dir         string // the AIPerf directory holding the files
	Profile     string
	AIPerfJSON  string
	MetricsJSON string
	MetricsCSV  string
}

var concFile = regexp.MustCompile(`_conc(\d+)\.json$`)

// ConcOfFile is N of a per-concurrency aggregate `<RF>_conc<N>.json`, 0 when
// the file name carries none.
func ConcOfFile(file string) int {
	m := concFile.FindStringSubmatch(path.Base(file))
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0
	}
	return n
}

// RawSiblingName is the raw artifact paired with a benchmark artifact
// bmk_agentic_<suffix>: agentic_<suffix>. ok is false for other names.
func RawSiblingName(benchmarkArtifact string) (string, bool) {
	suffix, ok := strings.CutPrefix(benchmarkArtifact, "bmk_agentic_")
	if !ok || suffix == "" {
		return "", false
	}
	return "agentic_" + suffix, true
}

// ServerLogKey is the suffix that pairs a per-job benchmark artifact with
// its server logs: bmk_<x> and bmk_agentic_<x> both pair with
// server_logs_<x> and multinode_server_logs_<x>.
func ServerLogKey(benchmarkArtifact string) (string, bool) {
	s, ok := strings.CutPrefix(benchmarkArtifact, "bmk_")
	if !ok {
		return "", false
	}
	s = strings.TrimPrefix(s, "agentic_")
	return s, s != ""
}

// Locate finds the sidecar files of one point in a raw artifact's file
// list (sorted slash paths). conc > 0 selects the multinode conc_<N>/
// child, falling back to the artifact root when it has none. It accepts
// the root itself or its single child directory, aiperf_artifacts/ or
// trace_replay/, and the older AIPerf layout with one more child directory
// (aiperf_artifacts/run_0/). The result depends only on the file list.
func Locate(files []string, conc int) (Files, bool) {
	if !sort.StringsAreSorted(files) {
		files = append([]string(nil), files...)
		sort.Strings(files)
	}
	if conc > 0 {
		prefix := "conc_" + strconv.Itoa(conc) + "/"
		if f, ok := locateUnder(files, prefix); ok {
			f.Layout = LayoutMultinode
			return f, true
		}
	}
	if f, ok := locateUnder(files, ""); ok {
		return f, true
	}
	// The artifact root may hold one directory (for example results/).
	if child, ok := singleChild(files, ""); ok {
		if f, ok := locateUnder(files, child); ok {
			return f, true
		}
	}
	return Files{}, false
}

func locateUnder(files []string, base string) (Files, bool) {
	for _, dir := range []string{"aiperf_artifacts/", "trace_replay/"} {
		d := base + dir
		if f, ok := filesIn(files, d); ok {
			f.Layout = LayoutSingleNode
			return f, true
		}
		if child, ok := singleChild(files, d); ok {
			if f, ok := filesIn(files, child); ok {
				f.Layout = LayoutNested
				return f, true
			}
		}
	}
	return Files{}, false
}

func filesIn(files []string, dir string) (Files, bool) {
	has := func(name string) string {
		p := dir + name
		i := sort.SearchStrings(files, p)
		if i < len(files) && files[i] == p {
			return p
		}
		return ""
	}
	f := Files{Dir: strings.TrimSuffix(dir, "/"), Profile: has(ProfileExport)}
	if f.Profile == "" {
		return Files{}, false
	}
	f.AIPerfJSON, f.MetricsJSON, f.MetricsCSV = has(ProfileAIPerfJSON), has(ServerMetricsJSON), has(ServerMetricsCSV)
	return f, true
}

// singleChild returns "<dir><child>/" when every file under dir lives in
// one child directory.
func singleChild(files []string, dir string) (string, bool) {
	child := ""
	for _, f := range files {
		rest, ok := strings.CutPrefix(f, dir)
		if !ok {
			continue
		}
		name, _, nested := strings.Cut(rest, "/")
		if !nested {
			return "", false // a file directly in dir
		}
		if child == "" {
			child = name
		} else if child != name {
			return "", false
		}
	}
	if child == "" {
		return "", false
	}
	return dir + child + "/", true
}
