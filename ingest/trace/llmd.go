package trace

import (
	"net/url"
	"regexp"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/inferencex/ingest/ingest/ptr"
)

// inputConfig is the part of the export's input_config the llm-d adapter
// reads: the benchmarked endpoints (the frontends) and the servers whose
// metrics were scraped explicitly.
type inputConfig struct {
	endpoints, servers []string
}

// readInputConfig takes the URL lists of input_config; anything else in it,
// and any entry that is not a string, is ignored.
func readInputConfig(raw json.RawMessage) inputConfig {
	var in struct {
		Endpoint struct {
			URLs []json.RawMessage `json:"urls"`
		} `json:"endpoint"`
		ServerMetrics struct {
			URLs []json.RawMessage `json:"urls"`
		} `json:"server_metrics"`
	}
	var ic inputConfig
	if json.Unmarshal(raw, &in) != nil {
		return ic
	}
	strs := func(raws []json.RawMessage) []string {
		var out []string
		for _, r := range raws {
			var s string
			if json.Unmarshal(r, &s) == nil {
				out = append(out, s)
			}
		}
		return out
	}
	ic.endpoints, ic.servers = strs(in.Endpoint.URLs), strs(in.ServerMetrics.URLs)
	return ic
}

// webURL is a URL as a browser's URL parser reads the usual http(s)
// endpoint: scheme and host lower-cased, the scheme's default port
// dropped, an empty path "/".
type webURL struct {
	origin, href, hostname string
}

var defaultPorts = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}

func parseWebURL(s string) (webURL, bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return webURL{}, false
	}
	scheme := strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == defaultPorts[scheme] {
		port = ""
	}
	hostPort := host
	if strings.Contains(host, ":") {
		hostPort = "[" + host + "]"
	}
	if port != "" {
		hostPort += ":" + port
	}
	origin := scheme + "://" + hostPort
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	href := origin + path
	if u.RawQuery != "" || u.ForceQuery {
		href += "?" + u.RawQuery
	}
	if u.Fragment != "" {
		href += "#" + u.EscapedFragment()
	}
	return webURL{origin: origin, href: href, hostname: host}, true
}

var metricsSuffix = regexp.MustCompile(`/(?:metrics/?)?$`)

// metricsHref is a server URL as its metrics endpoint: its path ending in
// /metrics. A string that is no URL stays as it is.
func metricsHref(s string) string {
	w, ok := parseWebURL(s)
	if !ok {
		return s
	}
	u, _ := url.Parse(w.href)
	u.RawPath = ""
	u.Path = metricsSuffix.ReplaceAllString(u.Path, "") + "/metrics"
	out, ok := parseWebURL(u.String())
	if !ok {
		return s
	}
	return out.href
}

// normalizeLLMD applies the llm-d adapter to the vLLM metrics of one block:
// a series a frontend mirrors (scraped from a frontend's origin, not an
// explicitly scraped server, with the label set of a series an explicitly
// scraped server reported with timeslices) is dropped, and every series is
// labelled with its worker (its endpoint) and role: combined on an
// aggregated point, else its llm-d.ai/role label (the dashboard's ingest
// may know the roles from elsewhere: see ChartWithheld).
func normalizeLLMD(got map[string][]*rawSeries, ic inputConfig, disagg bool) {
	explicit := map[string]bool{}
	for _, s := range ic.servers {
		explicit[metricsHref(s)] = true
	}
	frontends := map[string]bool{}
	for _, s := range ic.endpoints {
		if w, ok := parseWebURL(s); ok {
			frontends[w.origin] = true
		}
	}
	for name, ss := range got {
		if !strings.HasPrefix(name, "vllm:") {
			continue
		}
		direct := map[string]bool{}
		for _, s := range ss {
			if explicit[ptr.Deref(s.endpoint)] && s.slices > 0 {
				direct[labelKey(s.labels, nil)] = true
			}
		}
		kept := ss[:0:0]
		for _, s := range ss {
			if w, ok := parseWebURL(ptr.Deref(s.endpoint)); ok && !explicit[w.href] && frontends[w.origin] && direct[labelKey(s.labels, nil)] {
				continue
			}
			set := [][2]string{{"worker_id", ptr.Deref(s.endpoint)}}
			if !disagg {
				set = append(set, [2]string{"engine_type", "combined"})
			} else if r, ok := s.labels["llm-d.ai/role"]; ok {
				set = append(set, [2]string{"engine_type", r})
			}
			cp := *s
			cp.labels = labelsWith(s.labels, set...)
			if s.labelsJSON != "" {
				cp.labelsJSON = withLabels(s.labelsJSON, set)
			}
			kept = append(kept, &cp)
		}
		got[name] = kept
	}
}

// withLabels is a labels object (compact JSON) with the given labels set
// as JavaScript's object spread sets them: an existing key keeps its place,
// a new one goes last.
func withLabels(obj string, set [][2]string) string {
	var order []string
	vals := map[string]json.RawMessage{}
	dec := json.NewDecoder(strings.NewReader(obj))
	if _, err := dec.Token(); err == nil {
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			k, _ := tok.(string)
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				break
			}
			if _, ok := vals[k]; !ok {
				order = append(order, k)
			}
			vals[k] = v
		}
	}
	for _, kv := range set {
		q, _ := json.Marshal(kv[1])
		if _, ok := vals[kv[0]]; !ok {
			order = append(order, kv[0])
		}
		vals[kv[0]] = q
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range order {
		if i > 0 {
			b.WriteByte(',')
		}
		q, _ := json.Marshal(k)
		b.Write(q)
		b.WriteByte(':')
		b.Write(vals[k])
	}
	b.WriteByte('}')
	return b.String()
}
