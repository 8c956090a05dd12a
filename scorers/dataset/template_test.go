package dataset

import (
	"strings"
	"testing"
)

// TestTemplatesPrintData: a template prints a row's values as the data
// holds them (whole numbers without an exponent, other numbers as the
// shortest decimal that reads back the same, lists and records as JSON),
// and a null it prints is an error naming the field, unless the template
// says what to print instead (default, opt).
func TestTemplatesPrintData(t *testing.T) {
	row := Row{Line: 3, Fields: map[string]any{
		"big": 1500001.0, "huge": 1e21, "frac": 0.1, "third": 1.0 / 3, "small": 0.000001, "neg": -2500000.0,
		"list": []any{1500001.0, "a", nil}, "rec": map[string]any{"k": 2.5},
		"gone": nil, "nested": map[string]any{"x": nil}, "t": true,
	}}
	for tmpl, want := range map[string]string{
		"{{.big}}":                      "1500001",
		"{{.neg}}":                      "-2500000",
		"{{.huge}}":                     "1e+21",
		"{{.frac}}":                     "0.1",
		"{{.third}}":                    "0.3333333333333333",
		"{{.small}}":                    "0.000001",
		"{{.list}}":                     `[1500001,"a",null]`,
		"{{.rec}}":                      `{"k":2.5}`,
		"{{.t}}":                        "true",
		"{{range .list}}{{.}};{{end}}":  "", // a null element: an error below
		`{{.gone | default "n/a"}}`:     "n/a",
		`{{default "-" .big}}`:          "1500001",
		`{{opt . "gone"}}`:              "",
		`{{if .gone}}x{{else}}y{{end}}`: "y",
		`{{printf "%.2f" .frac}}`:       "0.10",
	} {
		m := Mapping{Question: Expr(tmpl)}
		c, err := m.compile(Env{})
		if err != nil {
			t.Fatalf("%s: %v", tmpl, err)
		}
		got, _, err := c.String("question", row)
		if strings.HasPrefix(tmpl, "{{range") {
			if err == nil || !strings.Contains(err.Error(), "null") {
				t.Errorf("%s: %q %v, want an error: a null element", tmpl, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", tmpl, got, err, want)
		}
	}
	for tmpl, field := range map[string]string{
		"Q: {{.gone}}":          "gone",
		`{{index .nested "x"}}`: `index .nested "x"`,
		"{{.nested.x}}":         "nested.x",
	} {
		m := Mapping{Question: Expr(tmpl)}
		c, _ := m.compile(Env{})
		got, _, err := c.String("question", row)
		if err == nil || !strings.Contains(err.Error(), "fields.question") || !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), "null") {
			t.Errorf("%s: %q %v, want an error naming fields.question, %s and null", tmpl, got, err, field)
		}
	}
}
