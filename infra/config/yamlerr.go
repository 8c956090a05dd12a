package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/glossobench/glossobench/internal/editdist"
)

// yaml.v3 reports decoding problems in Go's terms ("field x not found in type
// scorers.AxisConfig", "cannot unmarshal !!str `a` into int"). userError says
// the same in the terms of the file the user wrote: the key's path, the keys
// allowed there, a near miss, and the kind of value wanted.

var (
	reUnknownField = regexp.MustCompile(`^line (\d+): field (.+) not found in type .+$`)
	reBadValue     = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")
)

// userError rewrites a yaml.v3 decoding error of data in the user's terms,
// keeping the line numbers.
func userError(data []byte, err error) string {
	te, ok := err.(*yaml.TypeError)
	if !ok {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root) // the document parsed once already; a failure only loses paths
	msgs := make([]string, len(te.Errors))
	for i, e := range te.Errors {
		msgs[i] = describe(&root, e)
	}
	if isLMEvalTask(&root) {
		return "this is an lm-evaluation-harness task YAML (output_type, doc_to_text, ...), not a GlossoBench config: name it in a dataset entry (format: lm-eval-task, lm_eval_task: PATH) or write the entry with glossobench import-task lm-eval PATH; " + strings.Join(msgs, "; ")
	}
	return strings.Join(msgs, "; ")
}

// isLMEvalTask reports a document whose top level has the keys of an
// lm-evaluation-harness task.
func isLMEvalTask(root *yaml.Node) bool {
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return false
	}
	n := 0
	m := root.Content[0]
	for i := 0; i < len(m.Content); i += 2 {
		switch m.Content[i].Value {
		case "output_type", "doc_to_text", "doc_to_target", "doc_to_choice", "dataset_path", "dataset_name",
			"test_split", "fewshot_split", "validation_split", "training_split", "num_fewshot":
			n++
		}
	}
	return n >= 2
}

// describe rewrites one of yaml.v3's per-field messages.
func describe(root *yaml.Node, msg string) string {
	if m := reUnknownField.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		key := m[2]
		path, ok := findKey(root, line, key)
		if !ok {
			return fmt.Sprintf("line %d: %s is not a known key here", line, key)
		}
		where := strings.Join(path[:len(path)-1], ".")
		allowed := allowedKeys(path[:len(path)-1])
		s := fmt.Sprintf("line %d: %s is not a known key", line, joinPath(path))
		if near := nearest(key, allowed); near != "" {
			s += fmt.Sprintf("; did you mean %s?", near)
		}
		if len(allowed) > 0 {
			place := "at the top level"
			if where != "" {
				place = "under " + joinPath(path[:len(path)-1])
			}
			s += fmt.Sprintf(" (allowed %s: %s)", place, strings.Join(allowed, ", "))
		}
		return s
	}
	if m := reBadValue.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		got := yamlKind(m[2], m[3])
		want := wantedKind(m[4])
		if path, ok := findValue(root, line, m[3]); ok {
			return fmt.Sprintf("line %d: %s must be %s, got %s", line, joinPath(path), want, got)
		}
		return fmt.Sprintf("line %d: expected %s, got %s", line, want, got)
	}
	return msg
}

// joinPath writes a path as the user would: axes.knowledge.datasets[0].path.
func joinPath(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if i > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// findKey returns the path to the mapping key named key on line.
func findKey(n *yaml.Node, line int, key string) ([]string, bool) {
	var found []string
	walk(n, nil, func(path []string, k, v *yaml.Node) bool {
		if k != nil && k.Line == line && k.Value == key {
			found = append(append([]string{}, path...), key)
			return true
		}
		return false
	})
	return found, found != nil
}

// findValue returns the path to the value on line (written value, when known).
func findValue(n *yaml.Node, line int, value string) ([]string, bool) {
	var found []string
	walk(n, nil, func(path []string, k, v *yaml.Node) bool {
		if k == nil && v.Line == line && (value == "" || v.Value == value) && len(path) > 0 {
			found = append([]string{}, path...)
			return true
		}
		return false
	})
	return found, found != nil
}

// walk calls fn for every node below n with its path; k is the mapping key
// of a mapping value (nil in sequences). fn returning true stops the walk.
func walk(n *yaml.Node, path []string, fn func(path []string, k, v *yaml.Node) bool) bool {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if walk(c, path, fn) {
				return true
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if fn(path, k, v) {
				return true
			}
			p := append(append([]string{}, path...), k.Value)
			if fn(p, nil, v) || walk(v, p, fn) {
				return true
			}
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			p := append(append([]string{}, path...), "["+strconv.Itoa(i)+"]")
			if fn(p, nil, v) || walk(v, p, fn) {
				return true
			}
		}
	}
	return false
}

// allowedKeys lists the keys the config accepts at path, in the order the
// config documents them; nil where any key is allowed or the path is unknown.
func allowedKeys(path []string) []string {
	t := reflect.TypeOf(Config{})
	for _, p := range path {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map, reflect.Slice:
			t = t.Elem()
		case reflect.Struct:
			f, ok := fieldByKey(t, p)
			if !ok {
				return nil
			}
			t = f.Type
		default:
			return nil
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		if k := yamlKey(t.Field(i)); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if yamlKey(t.Field(i)) == key {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// yamlKey is a struct field's YAML key ("" when it has none).
func yamlKey(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	switch name {
	case "-":
		return ""
	case "":
		return strings.ToLower(f.Name) // yaml.v3's default
	}
	return name
}

// nearest returns the allowed key closest to key when it is a plausible typo
// (at most a third of its letters differ, and at most 3), else "".
func nearest(key string, allowed []string) string {
	best, bestD := "", 0
	for _, a := range allowed {
		d := editdist.Levenshtein(strings.ToLower(key), a)
		if best == "" || d < bestD {
			best, bestD = a, d
		}
	}
	if best == "" || bestD > 3 || bestD*3 > max(len(key), len(best)) {
		return ""
	}
	return best
}

// yamlKind names what the user wrote.
func yamlKind(tag, value string) string {
	switch tag {
	case "seq":
		return "a list"
	case "map":
		return "a mapping"
	case "null":
		return "nothing"
	}
	if value != "" {
		return strconv.Quote(value)
	}
	return "a " + tag
}

// wantedKind names the Go type yaml.v3 wanted in YAML's words.
func wantedKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["):
		return "a mapping of keys to values"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a single value (text)"
	}
	return "a mapping of keys to values" // a struct: a section of the config
}

// KeyLine returns the line of the key at path (e.g.
// axes.knowledge.datasets[0].path) in the YAML document data, or 0 when the
// document does not write it.
func KeyLine(data []byte, path string) int {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return 0
	}
	line := 0
	walk(&root, nil, func(p []string, k, v *yaml.Node) bool {
		switch {
		case k != nil && joinPath(append(append([]string{}, p...), k.Value)) == path:
			line = k.Line
		case k == nil && joinPath(p) == path:
			line = v.Line // a sequence element
		default:
			return false
		}
		return true
	})
	return line
}
