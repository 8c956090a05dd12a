package chattemplate

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/ardanlabs/jinja"
)

// renderPython renders each template with Python's Jinja2 as transformers
// configures it for chat templates (trim_blocks, lstrip_blocks) and x="X".
const renderPython = `
import json, sys, jinja2
env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
out = []
for src in json.load(sys.stdin):
    try:
        out.append(env.from_string(src).render(x="X"))
    except Exception as e:
        out.append(None)
json.dump(out, sys.stdout)
`

// Random templates of tags with and without whitespace-control signs,
// comments, spaces, tabs and newlines render as Python's Jinja2 renders them
// (the reference llama.cpp's engine follows): the whitespace pre-pass in
// whitespace.go against the reference, on the cases where the engine alone
// goes wrong and the rest. Skips without python3 and its jinja2.
func TestWhitespaceMatchesPythonJinja(t *testing.T) {
	if err := exec.Command("python3", "-c", "import jinja2").Run(); err != nil {
		t.Skip("python3 with jinja2 is not installed")
	}
	atoms := []string{"{% if true %}", "{% endif %}", "{%- if true %}", "{% if true -%}", "{%- endif -%}", "{%+ if true %}", "{% endif +%}",
		"{{ x }}", "{{- x }}", "{{ x -}}", "{# c #}", "{#- c -#}", " ", "  ", "\n", "\n\n", "\t", " \n ", "a", "b ", " c\n", "\r\n"}
	rng := rand.New(rand.NewPCG(17, 4))
	var srcs []string
	for len(srcs) < 3000 {
		var b strings.Builder
		depth := 0
		for n := 1 + rng.IntN(10); n > 0; n-- {
			a := atoms[rng.IntN(len(atoms))]
			switch {
			case strings.Contains(a, "endif"):
				if depth == 0 {
					continue
				}
				depth--
			case strings.Contains(a, "if true"):
				depth++
			}
			b.WriteString(a)
		}
		srcs = append(srcs, b.String()+strings.Repeat("{% endif %}", depth))
	}
	in, _ := json.Marshal(srcs)
	cmd := exec.Command("python3", "-c", renderPython)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var want []*string
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(srcs) {
		t.Fatalf("python3 answered %d outputs for %d templates: %v", len(want), len(srcs), err)
	}
	bad := 0
	for i, src := range srcs {
		if want[i] == nil {
			continue
		}
		tm, err := Compile("random", src)
		if err != nil {
			t.Errorf("%q: %v", src, err)
			continue
		}
		got, err := tm.tmpl.RenderValues(map[string]jinja.Value{"x": jinja.NewString("X")})
		if err != nil || got != *want[i] {
			if bad++; bad <= 10 {
				t.Errorf("%q: got %q, %v; Jinja2 %q", src, got, err, *want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d templates differ from Jinja2", bad, len(srcs))
	}
}
