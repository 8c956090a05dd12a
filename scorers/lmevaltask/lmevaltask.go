// Package lmevaltask turns an lm-evaluation-harness task YAML into the
// equivalent GlossoBench dataset entry: dataset_path, dataset_name and the
// splits name the data, doc_to_text / doc_to_target / doc_to_choice
// become field templates, output_type picks the axis kind
// (multiple_choice: mcq, generate_until: nlg). What an entry cannot say
// (process_docs in Python, filters, metrics other than the axis's own,
// stop sequences, another target_delimiter) is listed, one sentence each;
// with any of them the entry does not do what the task does, and Convert
// says so rather than writing an entry that looks equivalent.
package lmevaltask

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/dataset"
)

// Task is a task YAML with its includes merged (the including file's keys
// win), each value as YAML wrote it.
type Task struct {
	Path string
	Keys map[string]*yaml.Node
}

// Load reads a task YAML and, recursively, the files its include: names
// (relative to the including file).
func Load(path string) (*Task, error) {
	return load(path, 0)
}

func load(path string, depth int) (*Task, error) {
	if depth > 8 {
		return nil, fmt.Errorf("%s: include: more than 8 levels", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t := &Task{Path: path, Keys: map[string]*yaml.Node{}}
	if len(doc.Content) == 0 {
		return t, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a task (a mapping of keys)", path)
	}
	own := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		own[root.Content[i].Value] = root.Content[i+1]
	}
	if inc, ok := own["include"]; ok {
		parent, err := load(filepath.Join(filepath.Dir(path), inc.Value), depth+1)
		if err != nil {
			return nil, fmt.Errorf("%s: include %s: %w", path, inc.Value, err)
		}
		for k, v := range parent.Keys {
			t.Keys[k] = v
		}
	}
	for k, v := range own {
		if k != "include" {
			t.Keys[k] = v
		}
	}
	return t, nil
}

// Str is a key's value when it is a scalar, else "".
func (t *Task) Str(key string) string { return t.str(key) }

func (t *Task) str(key string) string {
	if n := t.Keys[key]; n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

// Hub is where the task's data lives on the Hugging Face Hub, as the
// Hub's Parquet export names it: the repository (dataset_path), the
// configuration (dataset_name; "default" for a dataset without one, the
// name the Hub's dataset viewer gives it) and the split the task scores
// (test_split, else validation_split).
func (t *Task) Hub() (repo, config, split string) {
	return t.str("dataset_path"), cmpOr(t.str("dataset_name"), "default"), cmpOr(t.str("test_split"), t.str("validation_split"))
}

// Entry is the converted task.
type Entry struct {
	Axis    string // the GlossoBench axis kind: mcq or nlg
	Dataset scorers.DatasetConfig
	// Source names the data the task reads: dataset_path, dataset_name
	// and the test split.
	Source string
	// Unsupported lists, one sentence each, what the entry cannot say.
	Unsupported []string
}

// Convert builds the dataset entry for the task; dataFile is the local
// file (or hf:// URI) holding the task's test split, which a GlossoBench
// entry names by file.
func Convert(t *Task, dataFile string) (*Entry, error) {
	e := &Entry{}
	name := t.str("task")
	if name == "" {
		return nil, fmt.Errorf("%s: no task name (task:)", t.Path)
	}
	split := cmpOr(t.str("test_split"), t.str("validation_split"))
	e.Source = fmt.Sprintf("dataset_path %s, dataset_name %s, split %s", cmpOr(t.str("dataset_path"), "(none)"), cmpOr(t.str("dataset_name"), "(none)"), cmpOr(split, "(none)"))
	for _, k := range []string{"process_docs", "process_results"} {
		if n := t.Keys[k]; n != nil {
			e.Unsupported = append(e.Unsupported, fmt.Sprintf("%s is Python (%s %s), which a dataset entry cannot run: the rows it changes or drops are read as the file holds them.", k, n.Tag, n.Value))
		}
	}
	if t.Keys["dataset_kwargs"] != nil {
		e.Unsupported = append(e.Unsupported, "dataset_kwargs (data_files, revision, ...) change which rows lm-eval loads; the entry reads the file or Hub split it names, so check that it holds the same rows.")
	}
	if t.Keys["filter_list"] != nil {
		e.Unsupported = append(e.Unsupported, "filter_list post-processes answers (regex, take_first, ...) before scoring; GlossoBench's axes score the reply as their own rules say.")
	}
	if d := t.Keys["target_delimiter"]; d != nil && d.Value != " " {
		e.Unsupported = append(e.Unsupported, fmt.Sprintf("target_delimiter %q: GlossoBench joins prompt and answer with one space.", d.Value))
	}
	if n := t.Keys["num_fewshot"]; n != nil && n.Value != "0" {
		e.Unsupported = append(e.Unsupported, fmt.Sprintf("num_fewshot %s from fewshot_split %s: give the split's file as the entry's fewshot.path with fewshot.n %s.", n.Value, cmpOr(t.str("fewshot_split"), "(none)"), n.Value))
	}
	m := dataset.Mapping{}
	var err error
	text := t.str("doc_to_text")
	if n := t.Keys["doc_to_text"]; n != nil && n.Tag == "!function" {
		return nil, fmt.Errorf("%s: doc_to_text is a Python function (%s), which a dataset entry cannot run", t.Path, n.Value)
	}
	if desc := t.str("description"); desc != "" {
		text = desc + text
	}
	prompt, err := translate(text, true)
	if err != nil {
		return nil, fmt.Errorf("%s: doc_to_text: %w", t.Path, err)
	}
	m.Prompt = dataset.Expr(prompt)
	target := t.Keys["doc_to_target"]
	if target == nil || target.Kind != yaml.ScalarNode || target.Tag == "!function" {
		return nil, fmt.Errorf("%s: doc_to_target: want a column or a template", t.Path)
	}
	answer, err := translate(target.Value, false)
	if err != nil {
		return nil, fmt.Errorf("%s: doc_to_target: %w", t.Path, err)
	}
	switch out := t.str("output_type"); out {
	case "multiple_choice":
		e.Axis = "mcq"
		e.Dataset.Format = "mcq"
		m.Answer = dataset.Expr(answer)
		ch := t.Keys["doc_to_choice"]
		switch {
		case ch == nil:
			return nil, fmt.Errorf("%s: multiple_choice without doc_to_choice", t.Path)
		case ch.Kind == yaml.SequenceNode:
			for _, c := range ch.Content {
				m.Choices.Each = append(m.Choices.Each, dataset.Expr("{{"+strconv.Quote(c.Value)+"}}"))
			}
		case ch.Kind == yaml.ScalarNode && ch.Tag != "!function" && !strings.Contains(ch.Value, "{"):
			m.Choices.List = dataset.Expr(ch.Value)
		default:
			return nil, fmt.Errorf("%s: doc_to_choice %q: want a list or a column holding one (a template or Python function building the list is beyond a dataset entry)", t.Path, ch.Value)
		}
		// lm-eval reads an integer target as the option's index and a
		// text as the option itself (choices.index(target)).
		switch {
		case strings.Contains(answer, "indexOf"), isInt(target.Value):
			m.AnswerAs = "index"
		default:
			m.AnswerAs = "text"
		}
		metricsBeyond(t, e, "acc", "acc_norm")
	case "generate_until":
		e.Axis = "nlg"
		e.Dataset.Format = "nlg"
		m.References = dataset.Expr(answer)
		if g := t.Keys["generation_kwargs"]; g != nil {
			var kw map[string]any
			if err := g.Decode(&kw); err == nil && kw["until"] != nil {
				e.Unsupported = append(e.Unsupported, fmt.Sprintf("generation_kwargs.until %q stops generation at those strings; the nlg axis reads the whole reply (answer_tag cuts after a label, not before a stop).", kw["until"]))
			}
		}
		metricsBeyond(t, e, "chrf")
	default:
		return nil, fmt.Errorf("%s: output_type %q: import-task converts multiple_choice and generate_until", t.Path, out)
	}
	e.Dataset.Name = name
	e.Dataset.Path = dataFile
	e.Dataset.Fields = &m
	if err := m.Check(e.Axis); err != nil {
		return nil, fmt.Errorf("%s: the converted fields: %w", t.Path, err)
	}
	return e, nil
}

// metricsBeyond names the task's metrics the axis does not compute.
func metricsBeyond(t *Task, e *Entry, have ...string) {
	n := t.Keys["metric_list"]
	if n == nil {
		return
	}
	var list []struct {
		Metric string `yaml:"metric"`
	}
	if n.Decode(&list) != nil {
		return
	}
	for _, m := range list {
		if !slices.Contains(have, m.Metric) {
			e.Unsupported = append(e.Unsupported, fmt.Sprintf("metric %s: the %s axis computes %s, not %s.", m.Metric, e.Axis, strings.Join(have, " and "), m.Metric))
		}
	}
}

func isInt(s string) bool { _, err := strconv.Atoi(strings.TrimSpace(s)); return err == nil }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

var (
	jinjaExpr = regexp.MustCompile(`(?s)\{\{-?(.*?)-?\}\}`)
	ident     = `[A-Za-z_][A-Za-z0-9_]*`
	reIdent   = regexp.MustCompile(`^(` + ident + `)$`)
	reStrip   = regexp.MustCompile(`^(` + ident + `)\.strip\(\)$|^(` + ident + `)\s*\|\s*trim$`)
	reIndex   = regexp.MustCompile(`^(` + ident + `)\[(\d+)\]$`)
	reListIdx = regexp.MustCompile(`^\[([^\]]*)\]\.index\((` + ident + `)\)$`)
	reStrLit  = regexp.MustCompile(`^'([^'\\]*)'$|^"([^"\\]*)"$`)
)

// translate turns a Jinja text (lm-eval's doc_to_* fields) into a Go
// template over the row. It knows the expressions lm-eval's task files
// use for plain data access: a column, col.strip() or col | trim,
// col[N], ['a', 'b', ...].index(col) and literals; anything else
// ({% %} blocks, filters, calls) is an error naming the expression. A
// text without "{{" is a column name, unless whole is set (doc_to_text:
// literal text).
func translate(src string, whole bool) (string, error) {
	if strings.Contains(src, "{%") {
		return "", fmt.Errorf("the Jinja statements ({%% ... %%}) are beyond what import-task translates")
	}
	if !strings.Contains(src, "{{") {
		if whole {
			return "{{" + strconv.Quote(src) + "}}", nil
		}
		if isInt(src) {
			return "{{" + strings.TrimSpace(src) + "}}", nil
		}
		return src, nil // a column
	}
	var b strings.Builder
	last := 0
	for _, loc := range jinjaExpr.FindAllStringSubmatchIndex(src, -1) {
		lit := src[last:loc[0]]
		if strings.Contains(lit, "{{") || strings.Contains(lit, "}}") {
			return "", fmt.Errorf("unbalanced braces in %q", src)
		}
		if lit != "" {
			b.WriteString("{{" + strconv.Quote(lit) + "}}")
		}
		g, err := goExpr(strings.TrimSpace(src[loc[2]:loc[3]]))
		if err != nil {
			return "", err
		}
		b.WriteString("{{" + g + "}}")
		last = loc[1]
	}
	if rest := src[last:]; rest != "" {
		b.WriteString("{{" + strconv.Quote(rest) + "}}")
	}
	return b.String(), nil
}

func field(name string) string { return "." + name }

func goExpr(x string) (string, error) {
	switch {
	case reIdent.MatchString(x):
		return field(x), nil
	case reStrip.MatchString(x):
		m := reStrip.FindStringSubmatch(x)
		return "trim " + field(cmpOr(m[1], m[2])), nil
	case reIndex.MatchString(x):
		m := reIndex.FindStringSubmatch(x)
		return "index " + field(m[1]) + " " + m[2], nil
	case reListIdx.MatchString(x):
		m := reListIdx.FindStringSubmatch(x)
		var opts []string
		for _, item := range strings.Split(m[1], ",") {
			lit := reStrLit.FindStringSubmatch(strings.TrimSpace(item))
			if lit == nil {
				return "", fmt.Errorf("{{%s}}: a list of other than quoted strings", x)
			}
			opts = append(opts, strconv.Quote(lit[1]+lit[2]))
		}
		return "indexOf " + field(m[2]) + " " + strings.Join(opts, " "), nil
	case reStrLit.MatchString(x):
		m := reStrLit.FindStringSubmatch(x)
		return strconv.Quote(m[1] + m[2]), nil
	case isInt(x):
		return x, nil
	}
	return "", fmt.Errorf("the Jinja expression {{%s}} is beyond what import-task translates (a column, col.strip(), col | trim, col[N], ['a', ...].index(col), a literal)", x)
}
