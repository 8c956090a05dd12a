package config

import (
	"fmt"
	"os"
)

// MaxConfigBytes bounds a config file. It is refused before it is parsed,
// so check and run hold at most a small multiple of it (YAML nodes cost
// about ten times their text); and a run started with its config inline
// carries it in a Temporal payload, which the server caps at 4 MB and
// refuses with a gRPC error that names no field.
const MaxConfigBytes = 1 << 20

// Limits of the config's identifiers and locations: a run carries them in
// its workflow input and memo, model.id also as a search attribute (which
// Temporal caps at 2 KB), and command-line overrides (--model, --model-id)
// come in without passing through MaxConfigBytes.
const (
	MaxNameBytes = 256  // ids, names, revisions, env var names
	MaxSpecBytes = 4096 // model specs and store URIs: a path or a URL (PATH_MAX)
)

// checkFileSize refuses a config file over MaxConfigBytes before reading it.
func checkFileSize(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return nil // the read that follows names the problem
	}
	return checkSize(path, st.Size())
}

func checkSize(name string, n int64) error {
	if n > MaxConfigBytes {
		return fmt.Errorf("config %s: %d bytes, more than the %d (1 MiB) a config may have; datasets, prompts and corpora belong in files the config names", name, n, MaxConfigBytes)
	}
	return nil
}

// checkFieldSizes refuses an identifier or location longer than its limit,
// naming the field, before any message quotes it.
func (c *Config) checkFieldSizes() error {
	type field struct {
		name, value string
		max         int
	}
	fs := []field{
		{"model.spec", c.Model.Spec, MaxSpecBytes},
		{"model.id", c.Model.ID, MaxNameBytes},
		{"model.name", c.Model.Name, MaxNameBytes},
		{"model.revision", c.Model.Revision, MaxNameBytes},
		{"model.api_key_env", c.Model.APIKeyEnv, MaxNameBytes},
		{"store.uri", c.Store.URI, MaxSpecBytes},
	}
	for i, j := range c.Judges {
		p := fmt.Sprintf("judges[%d].", i)
		fs = append(fs, field{p + "name", j.Name, MaxNameBytes}, field{p + "spec", j.Spec, MaxSpecBytes},
			field{p + "model", j.Model, MaxNameBytes}, field{p + "family", j.Family, MaxNameBytes},
			field{p + "version", j.Version, MaxNameBytes}, field{p + "api_key_env", j.APIKeyEnv, MaxNameBytes})
	}
	for _, f := range fs {
		if len(f.value) > f.max {
			return fmt.Errorf("%s: %d bytes, more than the %d it may have", f.name, len(f.value), f.max)
		}
	}
	return nil
}
