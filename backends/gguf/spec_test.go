package gguf

import (
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	path, opt, err := ParseSpec("m/tiny.gguf?chat=qa&threads=3&ctx=128")
	if err != nil || path != "m/tiny.gguf" || opt != (Options{ChatFormat: "qa", Threads: 3, ContextSize: 128}) {
		t.Errorf("got %q %+v %v", path, opt, err)
	}
	if path, opt, err := ParseSpec("plain.gguf"); err != nil || path != "plain.gguf" || opt != (Options{}) {
		t.Errorf("plain: %q %+v %v", path, opt, err)
	}
	for spec, want := range map[string]string{"": "empty path", "x?chat=vicuna": "vicuna", "x?threads=-1": "threads", "x?bogus=1": "bogus"} {
		if _, _, err := ParseSpec(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSpec(%q): err = %v, want it to mention %q", spec, err, want)
		}
	}
	m, err := OpenSpec(tinyPath + "?chat=qa")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !m.Capabilities().Chat || m.Capabilities().Name != "gguf:tiny-llama.gguf" {
		t.Errorf("capabilities %+v", m.Capabilities())
	}
}
