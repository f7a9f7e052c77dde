package benchmark

import "strings"

// Offload modes.
const (
	OffloadOff = "off"
	OffloadOn  = "on"
)

// offloadMode is the row's KV-offload mode: an explicit offload_mode, else
// derived from kv_offloading (or the legacy offloading): "none" is off, any
// other value on; off when nothing says otherwise.
func offloadMode(row map[string]any) string {
	if s, ok := nonEmptyString(row["offload_mode"]); ok {
		return strings.ToLower(s)
	}
	for _, key := range []string{"kv_offloading", "offloading"} {
		switch v := row[key].(type) {
		case string:
			s := strings.ToLower(strings.TrimSpace(v))
			if s == "none" {
				return OffloadOff
			}
			if s != "" {
				return OffloadOn
			}
		case bool:
			if v {
				return OffloadOn
			}
			return OffloadOff
		}
	}
	return OffloadOff
}

// addRuntimeMetadata copies runtime descriptors into metrics as strings:
// kv_offloading, kv_offload_backend (+_version), kv_p2p_transfer and
// router_name / router_version. Only non-empty trimmed strings are kept.
func addRuntimeMetadata(row map[string]any, metrics map[string]any) {
	setString := func(key string, v any) {
		if s, ok := nonEmptyString(v); ok {
			metrics[key] = s
		}
	}
	setString("kv_offloading", row["kv_offloading"])
	switch b := row["kv_offload_backend"].(type) {
	case string:
		setString("kv_offload_backend", b)
	case map[string]any:
		setString("kv_offload_backend", b["name"])
		setString("kv_offload_backend_version", b["version"])
	}
	setString("kv_p2p_transfer", row["kv_p2p_transfer"])
	switch r := row["router"].(type) {
	case string:
		setString("router_name", r)
	case map[string]any:
		setString("router_name", r["name"])
		setString("router_version", r["version"])
	}
}

// image restores an image reference: artifact names encode '/' as '#'.
func image(row map[string]any) *string {
	s, ok := nonEmptyString(row["image"])
	if !ok {
		return nil
	}
	s = strings.ReplaceAll(s, "#", "/")
	return &s
}

// recipeFingerprint reads recipe_fingerprint (or recipe-fingerprint); an
// empty value is no fingerprint.
func recipeFingerprint(row map[string]any) *string {
	v, ok := row["recipe_fingerprint"]
	if !ok || v == nil {
		v = row["recipe-fingerprint"]
	}
	s, ok := nonEmptyString(v)
	if !ok {
		return nil
	}
	return &s
}

// kvTransferLib reads kv_transfer_lib, the KV-cache transfer library the
// producer names on a disaggregated row (mooncake, nixl, …), in lower case
// as the dashboard keeps it; an empty value names none.
func kvTransferLib(row map[string]any) *string {
	s, ok := nonEmptyString(row["kv_transfer_lib"])
	if !ok {
		return nil
	}
	s = strings.ToLower(s)
	return &s
}

// datasetSlug names the AgentX dataset a point replayed, when the row says.
func datasetSlug(row map[string]any) string {
	ds, ok := object(row["dataset"])
	if !ok {
		return ""
	}
	if s, ok := nonEmptyString(ds["hf_dataset_name"]); ok {
		return s
	}
	s, _ := nonEmptyString(ds["loader"])
	return s
}
