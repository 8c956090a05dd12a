package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/glossobench/glossobench/scorers/dataset"
)

// TestMalaySuiteLoadsAndItsPinsHold loads testdata/suites/glossobench-v1-ms.yaml
// and checks every pinned file against its pin (skipped where the shared
// data folder is not beside the repository).
func TestMalaySuiteLoadsAndItsPinsHold(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "suites", "glossobench-v1-ms.yaml")
	c, err := Load(path, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Axes) != 7 {
		t.Fatalf("%d axes, want all seven", len(c.Axes))
	}
	checked := 0
	for name, a := range c.Axes {
		for _, d := range a.Datasets {
			if d.SHA256 == "" {
				t.Errorf("axes.%s %s: not pinned", name, d.Name)
				continue
			}
			p := d.Source(a.BaseDir).Path()
			data, err := os.ReadFile(p)
			if os.IsNotExist(err) {
				t.Logf("skip %s: %v", p, err)
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := dataset.SHA256Hex(data); got != d.SHA256 {
				t.Errorf("axes.%s %s: %s has sha256 %s, the suite pins %s", name, d.Name, p, got, d.SHA256)
			}
			checked++
		}
	}
	t.Logf("%d pinned files checked", checked)
}
