package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSizeLimitsNameFieldAndLimit: a config over MaxConfigBytes (read from
// a file or given inline) and a field over its own limit (in the file or
// from a command-line override) are refused in one sentence naming the
// field and the limit, not quoted whole and not passed on to Temporal.
func TestSizeLimitsNameFieldAndLimit(t *testing.T) {
	big := good + "# " + strings.Repeat("x", MaxConfigBytes) + "\n"
	if _, err := Parse([]byte(big), "c.yaml", "/cfg", Overrides{}); err == nil || !strings.Contains(err.Error(), "config c.yaml: 1048") || !strings.Contains(err.Error(), "more than the 1048576 (1 MiB) a config may have") {
		t.Errorf("inline: %v", err)
	}
	path := filepath.Join(t.TempDir(), "big.yaml")
	os.WriteFile(path, []byte(big), 0o644)
	if _, err := Load(path, Overrides{}); err == nil || !strings.Contains(err.Error(), "more than the 1048576 (1 MiB) a config may have") {
		t.Errorf("file: %v", err)
	}
	long := strings.Repeat("m", 300)
	for _, c := range []struct {
		yaml string
		ov   Overrides
		want string
	}{
		{strings.Replace(good, "model:\n", "model:\n  id: "+long+"\n", 1), Overrides{}, "model.id: 300 bytes, more than the 256 it may have"},
		{good, Overrides{ModelID: long}, "model.id: 300 bytes, more than the 256 it may have"},
		{good, Overrides{Model: "openai:http://h/" + strings.Repeat("p", 5000)}, "model.spec: 5016 bytes, more than the 4096 it may have"},
		{good + "judges:\n  - {name: " + long + ", spec: \"openai:http://j\"}\n", Overrides{}, "judges[0].name: 300 bytes, more than the 256 it may have"},
	} {
		_, err := Parse([]byte(c.yaml), "c.yaml", "/cfg", c.ov)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), long) {
			t.Errorf("error %.200v, want %q", err, c.want)
		}
	}
}
