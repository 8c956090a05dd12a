package docs

import (
	"encoding"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/workflows"
)

var update = flag.Bool("update", false, "rewrite the generated parts of docs/ from the code")

const module = "github.com/glossobench/glossobench/"

// root is the repository's root, from this package's folder.
const root = "../.."

// A key is one documented key of a YAML or JSON document: its path
// (axes.<axis>.datasets[].name), its type in words and the Go comment of
// the field behind it.
type key struct {
	path, typ, doc string
}

// keys lists the keys of documents decoded into t, by the struct tag tag
// ("yaml" or "json"), in field order, descending into nested objects.
// A type that decodes itself (a yaml.Unmarshaler, a json.Unmarshaler) is
// one key: its own package documents what it accepts.
func keys(t *testing.T, typ reflect.Type, tag string) []key {
	t.Helper()
	var out []key
	open := map[reflect.Type]bool{} // the types being walked: a type that holds itself is walked once
	var walk func(typ reflect.Type, prefix string)
	walk = func(typ reflect.Type, prefix string) {
		open[typ] = true
		defer delete(open, typ)
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get(tag), ",")
			if name == "-" {
				continue
			}
			ft := deref(f.Type)
			if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
				walk(ft, prefix) // embedded: its fields are the document's own
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name) // yaml.v3's and encoding/json's default
				if tag == "json" {
					name = f.Name
				}
			}
			path := prefix + name
			out = append(out, key{path, describe(f.Type), fieldDoc(t, typ, f.Name)})
			if decodesItself(f.Type) {
				continue
			}
			if elem, suffix := container(f.Type, name); elem.Kind() == reflect.Struct && strings.HasPrefix(elem.PkgPath(), module) && !open[elem] {
				walk(elem, path+suffix+".")
			}
		}
	}
	walk(deref(typ), "")
	return out
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// container returns the struct a field holds (itself, or a list's or a
// map's element) and the path suffix that reaches it.
func container(t reflect.Type, name string) (reflect.Type, string) {
	t = deref(t)
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return deref(t.Elem()), "[]"
	case reflect.Map:
		k := "<key>"
		if name == "axes" {
			k = "<axis>"
		}
		return deref(t.Elem()), "." + k
	}
	return t, ""
}

var (
	yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonUnmarshaler = reflect.TypeFor[interface{ UnmarshalJSON([]byte) error }]()
)

func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(deref(t))
	return p.Implements(yamlUnmarshaler) || p.Implements(textUnmarshaler) || p.Implements(jsonUnmarshaler)
}

// describe names a Go type in a document's terms.
func describe(t reflect.Type) string {
	t = deref(t)
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		return "list of " + describe(t.Elem())
	case reflect.Array:
		return fmt.Sprintf("%d %ss", t.Len(), describe(t.Elem()))
	case reflect.Map:
		return "map of " + describe(t.Elem())
	case reflect.Interface:
		return "any"
	case reflect.Struct:
		if decodesItself(t) {
			return t.String()
		}
		return "object"
	}
	return t.String()
}

// parsed caches the Go files of a package by import path.
var parsed = map[string][]*ast.File{}

// fieldDoc is the comment on field name of the struct type typ (the doc
// comment above it and the line comment after it, on one line), read from
// the package's source.
func fieldDoc(t *testing.T, typ reflect.Type, name string) string {
	t.Helper()
	rel, ok := strings.CutPrefix(typ.PkgPath(), module)
	if !ok {
		return ""
	}
	files, ok := parsed[rel]
	if !ok {
		dir := filepath.Join(root, filepath.FromSlash(rel))
		// The package's own files, one by one (parser.ParseDir is
		// deprecated); the field's comment is read wherever it is.
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		parsed[rel] = files
	}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				ts, ok := s.(*ast.TypeSpec)
				if !ok || ts.Name.Name != typ.Name() {
					continue
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, fl := range st.Fields.List {
					for _, n := range fl.Names {
						if n.Name == name {
							return oneLine(fl.Doc.Text() + " " + fl.Comment.Text())
						}
					}
				}
			}
		}
	}
	return ""
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// section finds the spec section a field's comment names (§N, §N #K or
// spec 003).
var section = regexp.MustCompile(`spec (§\d+(?:[–-]\d+)?(?:,? ?#\d+)?|003)|§\d+(?:[–-]\d+)?(?: #\d+)?`)

// table writes keys as a Markdown table; spec adds the column of the spec
// section each key implements.
func table(ks []key, spec map[string]string) string {
	var b strings.Builder
	if spec != nil {
		b.WriteString("| key | type | spec | what the code says |\n|---|---|---|---|\n")
	} else {
		b.WriteString("| key | type | what the code says |\n|---|---|---|\n")
	}
	for _, k := range ks {
		if spec != nil {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.path, k.typ, spec[k.path], k.doc)
		} else {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.path, k.typ, k.doc)
		}
	}
	return b.String()
}

// specSections are the spec sections of result.json fields whose Go
// comment names none. A field that has neither fails the test: every field
// result.json publishes says which part of the methodology it implements,
// or "run" for the run's own bookkeeping.
var specSections = map[string]string{
	"bench_version":                     "§5",
	"schema_version":                    "§5",
	"plugin_versions":                   "§5",
	"run_id":                            "run",
	"model_id":                          "§5",
	"model_meta":                        "§10 #2, #3",
	"model_meta.family":                 "§10 #2",
	"model_meta.model_class":            "§10 #3",
	"model_meta.params":                 "§10 #3",
	"model_meta.reasoning_mode":         "§10 #11",
	"config_hash":                       "§5",
	"limit":                             "§8",
	"seed":                              "§3, §8",
	"axes":                              "§1",
	"store":                             "run",
	"axes.<axis>.weight":                "§2",
	"axes.<axis>.tier":                  "§2",
	"axes.<axis>.measurement_profile":   "§0",
	"axes.<axis>.measurement_profile.n": "§0",
	"axes.<axis>.scores_key":            "§8, §10 #7",
	"summary":                           "§2–3",
	"summary.ms_public":                 "§2",
	"summary.ms_pooled":                 "§2",
	"summary.ms_experimental":           "§2",
	"summary.ms_ci95":                   "§3",
	"summary.ms_axes":                   "§2",
	"summary.ms_note":                   "§2",
	"summary.skipped_axes":              "§2, §7",
	"summary.skipped_no_judge":          "§2, §4",
	"axes.<axis>.measurement_profile.leakage":           "§0 (spec 003)",
	"axes.<axis>.measurement_profile.inter_judge_kappa": "§0, §4",
	"axes.<axis>.ci95":              "§3",
	"axes.<axis>.chance":            "§4",
	"axes.<axis>.discriminates":     "§4",
	"axes.<axis>.by_scoring":        "§1, §10 #8",
	"axes.<axis>.truncation_rate":   "§10 #9",
	"axes.<axis>.translation_delta": "§0 (principle 3)",
	"axes.<axis>.notes":             "§7",
	"axes.<axis>.secondary":         "§1",
	"summary.ms_ranking_axes":       "§4",
	"summary.ms_ranking_left_out":   "§4",
	"summary.ms_ranking_note":       "§4",
	"summary.near_chance_axes":      "§4",
	"summary.near_chance_eps":       "§4",
	"summary.dedup":                 "§6",
	"summary.notes":                 "§2, §7",
}

// specOf is the spec section of a result.json key: its comment's, else
// specSections', else its nearest parent's (in known, the sections found
// so far).
func specOf(k key, known map[string]string) string {
	if m := section.FindString(k.doc); m != "" {
		return strings.TrimPrefix(m, "spec ")
	}
	if s, ok := specSections[k.path]; ok {
		return s
	}
	for p := k.path; ; {
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			return ""
		}
		p = p[:i]
		if s := known[p]; s != "" {
			return s
		}
	}
}

// TestSpecReference: the config keys, workflow input fields and
// result.json fields listed in docs/SPEC_v1.0.md are those of the Go types
// that decode the config (infra/config.Config), EvalRun's input
// (workflows.EvalRunInput) and write result.json (infra/runfiles.Result),
// with their comments. Run with -update to rewrite them.
func TestSpecReference(t *testing.T) {
	cfg := keys(t, reflect.TypeFor[config.Config](), "yaml")
	res := keys(t, reflect.TypeFor[runfiles.Result](), "json")
	spec := map[string]string{}
	for _, k := range res {
		spec[k.path] = specOf(k, spec)
		if spec[k.path] == "" {
			t.Errorf("result.json field %s names no spec section: add one to its Go comment (spec §N) or to specSections", k.path)
		}
	}
	generated(t, "docs/SPEC_v1.0.md", map[string]string{
		"config keys":        table(cfg, nil),
		"workflow input":     table(keys(t, reflect.TypeFor[workflows.EvalRunInput](), "json"), nil),
		"result.json fields": table(res, spec),
	})
}

// generated checks (or with -update rewrites) the regions of the file at
// path (relative to the repository root) between the markers
// "<!-- BEGIN generated NAME -->" and "<!-- END generated NAME -->".
func generated(t *testing.T, path string, regions map[string]string) {
	t.Helper()
	full := filepath.Join(root, path)
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for name, want := range regions {
		begin, end := "<!-- BEGIN generated "+name+" -->\n", "<!-- END generated "+name+" -->"
		i, j := strings.Index(doc, begin), strings.Index(doc, end)
		if i < 0 || j < i {
			t.Fatalf("%s has no %q … %q region", path, strings.TrimSpace(begin), end)
		}
		i += len(begin)
		if doc[i:j] == want {
			continue
		}
		if *update {
			doc = doc[:i] + want + doc[j:]
			continue
		}
		t.Errorf("%s: the generated %s differ from the code; run `go generate ./internal/docs/` (go test ./internal/docs -run TestSpecReference -update) and commit the file", path, name)
	}
	if *update && doc != string(b) {
		if err := os.WriteFile(full, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
