package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAuditCommand(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "rows.csv")
	var b strings.Builder
	b.WriteString("ok,judge,grade\n")
	// Two judges, the same yes-rate: the source carries nothing.
	for _, judge := range []string{"a", "b"} {
		for i := range 60 {
			y := i%3 != 0
			g := 0
			if (y && i%5 != 0) || (!y && i%7 == 0) {
				g = 1
			}
			b.WriteString(map[bool]string{true: "yes", false: "no"}[y] + "," + judge + "," + []string{"0", "1"}[g] + "\n")
		}
	}
	os.WriteFile(csv, []byte(b.String()), 0o644)
	png := filepath.Join(dir, "audit.png")
	var out, errb bytes.Buffer
	code := auditMain([]string{"--data", csv, "--label", "ok", "--source", "judge", "--measurements", "grade",
		"--shuffles", "50", "--bootstrap", "100", "--plot", png}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "source-only 0.500") || !strings.Contains(out.String(), "verdict: source carries nothing") {
		t.Errorf("output:\n%s", out.String())
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		t.Errorf("no chart: %v", err)
	}

	out.Reset()
	code = auditMain([]string{"--data", csv, "--label", "ok", "--source", "judge", "--measurements", "grade",
		"--detector", "logreg", "--folds", "3", "--shuffles", "20", "--bootstrap", "50", "--json"}, &out, &errb)
	var rep map[string]any
	if code != 0 || json.Unmarshal(out.Bytes(), &rep) != nil || rep["verdict"] == nil || rep["l_min"] == nil {
		t.Errorf("json: exit %d, %s %s", code, out.String(), errb.String())
	}
}

func TestAuditCommandErrors(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "bad.csv")
	os.WriteFile(csv, []byte("ok,src,m\n1,a,0.5\n0,b,x\n"), 0o644)
	var out, errb bytes.Buffer
	if code := auditMain([]string{"--data", csv, "--label", "ok", "--source", "src", "--measurements", "m"}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), csv+`:3: column "m": "x" is not a number`) {
		t.Errorf("exit %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := auditMain([]string{"--data", csv}, &out, &errb); code != 2 {
		t.Errorf("missing flags: exit %d", code)
	}
	os.WriteFile(csv, []byte("ok,src,m\n1,a,0.5\n0,a,0.1\n"), 0o644)
	out.Reset()
	if code := auditMain([]string{"--data", csv, "--label", "ok", "--source", "src", "--measurements", "m"}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "not pooled") {
		t.Errorf("one source: exit %d: %s", code, out.String())
	}
}
