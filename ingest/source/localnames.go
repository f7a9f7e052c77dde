package source

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// NamesFile maps the local names of a run tree's zips back to artifact
// names that cannot be file names there: GitHub allows names with spaces,
// parentheses or "#", and up to 255 characters (254 and ".zip" do not fit
// a file name). `ingest run` lays such an artifact out as
// "artifact+ID.zip" and records {"artifact+ID": "its name"} here; the
// tree then knows the artifact by its name, and refuses or reads it
// exactly as it would a folder of that name.
const NamesFile = ".artifact-names.json"

// WriteNames writes the names file at path: local stem → artifact name.
func WriteNames(path string, names map[string]string) error {
	data, err := json.MarshalIndent(names, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".names-*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// readNames reads the names file of a tree: local stem → artifact name.
// Every stem must be a valid artifact name and every name non-empty valid
// UTF-8 without NUL or a slash.
func readNames(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var names map[string]string
	if err := json.Unmarshal(data, &names); err != nil {
		return nil, err
	}
	for stem, name := range names {
		switch {
		case !validArtifactName(stem):
			return nil, fmt.Errorf("local name %q is not a valid artifact name", stem)
		case name == "" || !utf8.ValidString(name) || strings.ContainsAny(name, "\x00/"):
			return nil, fmt.Errorf("local name %s: artifact name %q cannot be one", stem, name)
		}
	}
	return names, nil
}
