package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/scorers/dataset"
)

// TestMalaySuiteLoadsAndItsPinsHold loads testdata/suites/glossobench-v1-ms.yaml
// and checks that every dataset file it reads lies inside the repository
// (a clone has nothing beside itself), exists, and holds its SHA-256 pin.
func TestMalaySuiteLoadsAndItsPinsHold(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "testdata", "suites", "glossobench-v1-ms.yaml")
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
			if rel, err := filepath.Rel(root, p); err != nil || strings.HasPrefix(rel, "..") || strings.Contains(p, "://") {
				t.Errorf("axes.%s %s: %s is not inside the repository", name, d.Name, p)
				continue
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Errorf("axes.%s %s: %v", name, d.Name, err)
				continue
			}
			if got := dataset.SHA256Hex(data); got != d.SHA256 {
				t.Errorf("axes.%s %s: %s has sha256 %s, the suite pins %s", name, d.Name, p, got, d.SHA256)
			}
			checked++
		}
	}
	if checked != 11 {
		t.Errorf("%d pinned files checked, want the suite's 11", checked)
	}
}
