package catalog

import (
	"errors"
	"fmt"
	"strings"

	"github.com/inferencex/ingest/ingest/strictjson"
)

// errEmptyKey is returned for an empty vocabulary entry.
var errEmptyKey = errors.New("empty key")

// file is the JSON shape of catalog.json and of extension files.
type file struct {
	Models                       map[string]string         `json:"models"`
	ModelPrefixAliases           map[string]string         `json:"model_prefix_aliases"`
	ModelPrefixPrecisionSuffixes []string                  `json:"model_prefix_precision_suffixes"`
	ModelIDs                     map[string]string         `json:"model_ids"`
	GPUs                         map[string]string         `json:"gpus"`
	Frameworks                   []string                  `json:"frameworks"`
	FrameworkAliases             map[string]FrameworkAlias `json:"framework_aliases"`
	Precisions                   []string                  `json:"precisions"`
	PrecisionAliases             map[string]string         `json:"precision_aliases"`
	SpecMethods                  []string                  `json:"spec_methods"`
	SpecMethodAliases            map[string]string         `json:"spec_method_aliases"`
	MetricKeys                   []string                  `json:"metric_keys"`
	PowerMetricKeys              []string                  `json:"power_metric_keys"`
	MeasuredPowerKeys            []string                  `json:"measured_power_keys"`
	CPUPowerKeys                 []string                  `json:"cpu_power_keys"`
	NonMetricKeys                []string                  `json:"non_metric_keys"`
}

// decodeFile parses one catalog file strictly (strictjson.Decode): one
// object, nothing after it, no key twice at any depth, no unknown key. An
// alias table decides what every later row is stored as, so a file that
// says two things (the last of two spellings of a GPU, a second object)
// is refused rather than read in part.
func decodeFile(data []byte) (*file, error) {
	var f file
	if err := strictjson.Decode(data, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// merge adds ext's entries to f; map entries of ext replace f's.
func (f *file) merge(ext *file) {
	f.Models = mergeMap(f.Models, ext.Models)
	f.ModelPrefixAliases = mergeMap(f.ModelPrefixAliases, ext.ModelPrefixAliases)
	f.ModelPrefixPrecisionSuffixes = append(f.ModelPrefixPrecisionSuffixes, ext.ModelPrefixPrecisionSuffixes...)
	f.ModelIDs = mergeMap(f.ModelIDs, ext.ModelIDs)
	f.GPUs = mergeMap(f.GPUs, ext.GPUs)
	f.Frameworks = append(f.Frameworks, ext.Frameworks...)
	f.FrameworkAliases = mergeMap(f.FrameworkAliases, ext.FrameworkAliases)
	f.Precisions = append(f.Precisions, ext.Precisions...)
	f.PrecisionAliases = mergeMap(f.PrecisionAliases, ext.PrecisionAliases)
	f.SpecMethods = append(f.SpecMethods, ext.SpecMethods...)
	f.SpecMethodAliases = mergeMap(f.SpecMethodAliases, ext.SpecMethodAliases)
	f.MetricKeys = append(f.MetricKeys, ext.MetricKeys...)
	f.PowerMetricKeys = append(f.PowerMetricKeys, ext.PowerMetricKeys...)
	f.MeasuredPowerKeys = append(f.MeasuredPowerKeys, ext.MeasuredPowerKeys...)
	f.CPUPowerKeys = append(f.CPUPowerKeys, ext.CPUPowerKeys...)
	f.NonMetricKeys = append(f.NonMetricKeys, ext.NonMetricKeys...)
}

func mergeMap[V any](dst, src map[string]V) map[string]V {
	if dst == nil {
		dst = make(map[string]V, len(src))
	}
	for k, v := range src {
		dst[k] = v
	}
	return dst
}

// build validates the merged file and turns it into lookup tables.
func build(f *file) (*Catalog, error) {
	c := &Catalog{
		models:           map[string]string{},
		prefixAliases:    map[string]string{},
		modelIDs:         map[string]string{},
		gpus:             map[string]string{},
		frameworks:       map[string]bool{},
		frameworkAliases: map[string]FrameworkAlias{},
		precisions:       map[string]bool{},
		precisionAliases: map[string]string{},
		specMethods:      map[string]bool{},
		specAliases:      map[string]string{},
		metricKeys:       map[string]bool{},
		nonMetricKeys:    map[string]bool{},
	}
	for k, display := range f.Models {
		if err := checkLowerKey(k); err != nil {
			return nil, fmt.Errorf("models: %q: %w", k, err)
		}
		c.models[k] = display
	}
	for alias, key := range f.ModelPrefixAliases {
		if err := checkLowerKey(alias); err != nil {
			return nil, fmt.Errorf("model_prefix_aliases: %q: %w", alias, err)
		}
		if _, ok := c.models[key]; !ok {
			return nil, fmt.Errorf("model_prefix_aliases: %q: target %q is not a model key", alias, key)
		}
		c.prefixAliases[alias] = key
	}
	seenSuffix := map[string]bool{}
	for _, s := range f.ModelPrefixPrecisionSuffixes {
		if err := checkLowerKey(s); err != nil {
			return nil, fmt.Errorf("model_prefix_precision_suffixes: %q: %w", s, err)
		}
		if !seenSuffix[s] {
			seenSuffix[s] = true
			c.prefixSuffixes = append(c.prefixSuffixes, s)
		}
	}
	for id, key := range f.ModelIDs {
		if id == "" {
			return nil, fmt.Errorf("model_ids: %w", errEmptyKey)
		}
		if _, ok := c.models[key]; !ok {
			return nil, fmt.Errorf("model_ids: %q: target %q is not a model key", id, key)
		}
		c.modelIDs[id] = key
	}
	for gpu, vendor := range f.GPUs {
		if err := checkLowerKey(gpu); err != nil {
			return nil, fmt.Errorf("gpus: %q: %w", gpu, err)
		}
		if strings.ContainsAny(gpu, "-:_") {
			return nil, fmt.Errorf("gpus: %q: a GPU key cannot contain '-', ':' or '_'", gpu)
		}
		c.gpus[gpu] = vendor
	}
	if err := addSet(c.frameworks, f.Frameworks, "frameworks"); err != nil {
		return nil, err
	}
	for alias, fa := range f.FrameworkAliases {
		if err := checkLowerKey(alias); err != nil {
			return nil, fmt.Errorf("framework_aliases: %q: %w", alias, err)
		}
		if !c.frameworks[fa.Canonical] {
			return nil, fmt.Errorf("framework_aliases: %q: canonical %q is not a framework", alias, fa.Canonical)
		}
		c.frameworkAliases[alias] = fa
	}
	if err := addSet(c.precisions, f.Precisions, "precisions"); err != nil {
		return nil, err
	}
	if err := addAliases(c.precisionAliases, f.PrecisionAliases, c.precisions, "precision_aliases"); err != nil {
		return nil, err
	}
	if err := addSet(c.specMethods, f.SpecMethods, "spec_methods"); err != nil {
		return nil, err
	}
	if err := addAliases(c.specAliases, f.SpecMethodAliases, c.specMethods, "spec_method_aliases"); err != nil {
		return nil, err
	}
	if err := addKeys(c.metricKeys, f.MetricKeys, "metric_keys"); err != nil {
		return nil, err
	}
	if err := addKeys(c.metricKeys, f.PowerMetricKeys, "power_metric_keys"); err != nil {
		return nil, err
	}
	measured := map[string]bool{}
	for _, k := range f.MeasuredPowerKeys {
		if k == "" {
			return nil, fmt.Errorf("measured_power_keys: %w", errEmptyKey)
		}
		if !measured[k] {
			measured[k] = true
			c.measuredPower = append(c.measuredPower, k)
			c.metricKeys[k] = true
		}
	}
	cpuPower := map[string]bool{}
	for _, k := range f.CPUPowerKeys {
		if !measured[k] {
			return nil, fmt.Errorf("cpu_power_keys: %q is not a measured power key", k)
		}
		cpuPower[k] = true
	}
	for _, k := range c.measuredPower {
		switch {
		case cpuPower[k]: // CPU-side: never GPU power
		case strings.HasSuffix(k, "_power_w") || strings.HasSuffix(k, "_energy_j") || strings.Contains(k, "joules_per_"):
			c.gpuPower = append(c.gpuPower, k)
		}
	}
	if err := addKeys(c.nonMetricKeys, f.NonMetricKeys, "non_metric_keys"); err != nil {
		return nil, err
	}
	for k := range c.nonMetricKeys {
		if c.metricKeys[k] {
			return nil, fmt.Errorf("non_metric_keys: %q is also a metric key", k)
		}
	}
	return c, nil
}

func checkLowerKey(k string) error {
	if k == "" {
		return errEmptyKey
	}
	if k != strings.ToLower(strings.TrimSpace(k)) {
		return fmt.Errorf("must be lower-case without surrounding spaces")
	}
	return nil
}

func addSet(dst map[string]bool, keys []string, section string) error {
	for _, k := range keys {
		if err := checkLowerKey(k); err != nil {
			return fmt.Errorf("%s: %q: %w", section, k, err)
		}
		dst[k] = true
	}
	return nil
}

func addKeys(dst map[string]bool, keys []string, section string) error {
	for _, k := range keys {
		if k == "" {
			return fmt.Errorf("%s: %w", section, errEmptyKey)
		}
		dst[k] = true
	}
	return nil
}

// addAliases copies aliases whose target is in valid. Alias names are
// matched case-insensitively, so they must be lower-case; the empty alias
// is allowed (it names a blank raw value).
func addAliases(dst, aliases map[string]string, valid map[string]bool, section string) error {
	for alias, target := range aliases {
		if alias != strings.ToLower(strings.TrimSpace(alias)) {
			return fmt.Errorf("%s: %q: must be lower-case without surrounding spaces", section, alias)
		}
		if !valid[target] {
			return fmt.Errorf("%s: %q: target %q is not a known value", section, alias, target)
		}
		dst[alias] = target
	}
	return nil
}
