package catalog

import (
	"strings"
)

// ResolveModel returns the model key of a row. A non-empty prefix
// (infmax_model_prefix) is tried first, case-insensitively: as a model key,
// as a prefix alias, then with a precision suffix (-fp4, -nvfp4-v2, …)
// stripped. Otherwise the exact (case-sensitive) model id is looked up.
func (c *Catalog) ResolveModel(prefix, model string) (string, bool) {
	if p := strings.ToLower(strings.TrimSpace(prefix)); p != "" {
		if key, ok := c.resolvePrefix(p); ok {
			return key, true
		}
		if stripped := c.stripPrecisionSuffix(p); stripped != p {
			if key, ok := c.resolvePrefix(stripped); ok {
				return key, true
			}
		}
	}
	if model != "" {
		if key, ok := c.modelIDs[model]; ok {
			return key, true
		}
	}
	return "", false
}

func (c *Catalog) resolvePrefix(p string) (string, bool) {
	if _, ok := c.models[p]; ok {
		return p, true
	}
	key, ok := c.prefixAliases[p]
	return key, ok
}

// stripPrecisionSuffix cuts p at the earliest "-<suffix>" that is followed
// by the end or by another "-" (so "dsr1-fp4-v2" becomes "dsr1").
func (c *Catalog) stripPrecisionSuffix(p string) string {
	cut := -1
	for _, s := range c.prefixSuffixes {
		token := "-" + s
		for from := 0; from < len(p); {
			i := strings.Index(p[from:], token)
			if i < 0 {
				break
			}
			at := from + i
			end := at + len(token)
			if end == len(p) || p[end] == '-' {
				if cut < 0 || at < cut {
					cut = at
				}
				break
			}
			from = at + 1
		}
	}
	if cut < 0 {
		return p
	}
	return p[:cut]
}

// ResolveHardware maps a runner label (b200-dgxc, cluster:b300-nv,
// mi355x-amd_0, mi355x_0, H200-NV) to its GPU key: lower-case, drop
// everything through the last ':', drop a trailing "_<digits>" runner
// index, keep the segment before the first '-'. The result is valid only if
// it is a GPU key.
func (c *Catalog) ResolveHardware(hw string) (string, bool) {
	s := strings.ToLower(strings.TrimSpace(hw))
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.LastIndexByte(s, '_'); i >= 0 && i+1 < len(s) && allDigits(s[i+1:]) {
		s = s[:i]
	}
	if i := strings.IndexByte(s, '-'); i >= 0 {
		s = s[:i]
	}
	if _, ok := c.gpus[s]; !ok || s == "" {
		return "", false
	}
	return s, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ResolveFramework canonicalises a framework name and derives the
// disaggregation flag. The flag comes from the alias when it sets one, is
// true for mori-* frameworks, else follows an explicit boolean disaggField
// (true, false or their case-insensitive strings), else is true for
// dynamo-* frameworks. known reports whether the canonical name is in the
// framework registry; the empty name is never known.
func (c *Catalog) ResolveFramework(fw string, disaggField any) (canonical string, disagg bool, known bool) {
	lower := strings.ToLower(strings.TrimSpace(fw))
	canonical = lower
	alias, aliased := c.frameworkAliases[lower]
	if aliased {
		canonical = alias.Canonical
	}
	switch {
	case aliased && alias.Disagg != nil:
		disagg = *alias.Disagg
	case strings.HasPrefix(canonical, "mori-"):
		disagg = true
	default:
		if b, ok := ParseOptionalBool(disaggField); ok {
			disagg = b
		} else {
			disagg = strings.HasPrefix(canonical, "dynamo-")
		}
	}
	return canonical, disagg, canonical != "" && c.frameworks[canonical]
}

// ParseOptionalBool reads an explicit boolean: a JSON bool or the strings
// "true"/"false" in any case. Anything else is not a boolean.
func ParseOptionalBool(v any) (value bool, ok bool) {
	switch t := v.(type) {
	case bool:
		return t, true
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

// ResolvePrecision canonicalises a precision case-insensitively through the
// alias table (nvfp4 and mxfp4 are fp4). The empty precision is not valid.
func (c *Catalog) ResolvePrecision(p string) (string, bool) {
	s := strings.ToLower(strings.TrimSpace(p))
	if target, ok := c.precisionAliases[s]; ok {
		s = target
	}
	return s, s != "" && c.precisions[s]
}

// ResolveSpecMethod canonicalises a spec_decoding value. nil, "" and "null"
// mean none; strings are matched case-insensitively. Other JSON types are
// never valid.
func (c *Catalog) ResolveSpecMethod(s any) (string, bool) {
	var raw string
	switch t := s.(type) {
	case nil:
		raw = ""
	case string:
		raw = t
	default:
		return "", false
	}
	m := strings.ToLower(strings.TrimSpace(raw))
	if target, ok := c.specAliases[m]; ok {
		m = target
	}
	return m, c.specMethods[m]
}
