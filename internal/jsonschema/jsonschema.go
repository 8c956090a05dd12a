// Package jsonschema validates JSON documents against the part of JSON
// Schema draft-07 that the schemas of the tools GlossoBench writes for use
// (Every Eval Ever's eval.schema.json): type, enum, const, required,
// properties, additionalProperties, items, minItems, minimum, maximum,
// pattern, $ref into the document, allOf, anyOf, oneOf and if/then/else.
// A keyword outside that set is an error, so a schema is never checked
// only in part without saying so.
package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Schema is a parsed schema document.
type Schema struct {
	root map[string]any
}

// annotations are keywords that do not constrain a value.
var annotations = []string{"$schema", "$id", "$comment", "title", "description", "default", "examples", "version", "$defs", "definitions"}

// assertions are the keywords Validate checks.
var assertions = []string{"type", "enum", "const", "required", "properties", "additionalProperties", "items", "minItems",
	"minimum", "maximum", "pattern", "$ref", "allOf", "anyOf", "oneOf", "if", "then", "else"}

// Parse reads a schema and checks that every keyword in it is one this
// package knows.
func Parse(data []byte) (*Schema, error) {
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if err := checkKeywords(root, "#"); err != nil {
		return nil, err
	}
	return &Schema{root: root}, nil
}

func checkKeywords(s map[string]any, at string) error {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(annotations, k) && !slices.Contains(assertions, k) {
			return fmt.Errorf("schema %s: keyword %q is not supported", at, k)
		}
		switch k {
		case "properties", "$defs", "definitions":
			m, _ := s[k].(map[string]any)
			for name, sub := range m {
				if err := sub1(sub, at+"/"+k+"/"+name); err != nil {
					return err
				}
			}
		case "items", "if", "then", "else":
			if err := sub1(s[k], at+"/"+k); err != nil {
				return err
			}
		case "additionalProperties":
			if _, isBool := s[k].(bool); !isBool {
				if err := sub1(s[k], at+"/"+k); err != nil {
					return err
				}
			}
		case "allOf", "anyOf", "oneOf":
			list, _ := s[k].([]any)
			for i, sub := range list {
				if err := sub1(sub, fmt.Sprintf("%s/%s/%d", at, k, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func sub1(v any, at string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("schema %s: want an object", at)
	}
	return checkKeywords(m, at)
}

// Validate checks a JSON document and returns every violation, each
// naming the document path (/evaluation_results/0/score_details) and the
// schema keyword; none means the document is valid.
func (s *Schema) Validate(doc []byte) ([]string, error) {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("document: %w", err)
	}
	var errs []string
	s.check(s.root, v, "", &errs)
	return errs, nil
}

func (s *Schema) resolve(ref string) (map[string]any, error) {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, fmt.Errorf("$ref %q: only references into the document (#/...) are supported", ref)
	}
	var cur any = s.root
	for _, part := range strings.Split(path, "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q: no such definition", ref)
		}
		cur = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("$ref %q: no such definition", ref)
	}
	return m, nil
}

func (s *Schema) valid(sch map[string]any, v any, at string) bool {
	var errs []string
	s.check(sch, v, at, &errs)
	return len(errs) == 0
}

func (s *Schema) check(sch map[string]any, v any, at string, errs *[]string) {
	fail := func(format string, args ...any) {
		where := at
		if where == "" {
			where = "/"
		}
		*errs = append(*errs, where+": "+fmt.Sprintf(format, args...))
	}
	if ref, ok := sch["$ref"].(string); ok {
		target, err := s.resolve(ref)
		if err != nil {
			fail("%v", err)
			return
		}
		s.check(target, v, at, errs)
	}
	if t, ok := sch["type"]; ok {
		var types []string
		switch x := t.(type) {
		case string:
			types = []string{x}
		case []any:
			for _, e := range x {
				types = append(types, fmt.Sprint(e))
			}
		}
		if !slices.ContainsFunc(types, func(t string) bool { return isType(v, t) }) {
			fail("type: want %s, got %s", strings.Join(types, " or "), typeOf(v))
			return
		}
	}
	if e, ok := sch["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return reflect.DeepEqual(x, v) }) {
		fail("enum: %v is not one of %v", v, e)
	}
	if c, ok := sch["const"]; ok && !reflect.DeepEqual(c, v) {
		fail("const: want %v, got %v", c, v)
	}
	if n, ok := v.(float64); ok {
		if min, ok := sch["minimum"].(float64); ok && n < min {
			fail("minimum: %v < %v", n, min)
		}
		if max, ok := sch["maximum"].(float64); ok && n > max {
			fail("maximum: %v > %v", n, max)
		}
	}
	if str, ok := v.(string); ok {
		if p, ok := sch["pattern"].(string); ok {
			re, err := regexp.Compile(p)
			if err != nil {
				fail("pattern %q: %v", p, err)
			} else if !re.MatchString(str) {
				fail("pattern: %q does not match %s", str, p)
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		if req, ok := sch["required"].([]any); ok {
			for _, r := range req {
				if _, has := obj[fmt.Sprint(r)]; !has {
					fail("required: %s is missing", r)
				}
			}
		}
		props, _ := sch["properties"].(map[string]any)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := props[k].(map[string]any); ok {
				s.check(p, obj[k], at+"/"+k, errs)
				continue
			}
			switch ap := sch["additionalProperties"].(type) {
			case bool:
				if !ap {
					fail("additionalProperties: %s is not allowed", k)
				}
			case map[string]any:
				s.check(ap, obj[k], at+"/"+k, errs)
			}
		}
	}
	if list, ok := v.([]any); ok {
		if min, ok := sch["minItems"].(float64); ok && float64(len(list)) < min {
			fail("minItems: %d < %v", len(list), min)
		}
		if items, ok := sch["items"].(map[string]any); ok {
			for i, e := range list {
				s.check(items, e, fmt.Sprintf("%s/%d", at, i), errs)
			}
		}
	}
	if all, ok := sch["allOf"].([]any); ok {
		for _, sub := range all {
			s.check(sub.(map[string]any), v, at, errs)
		}
	}
	if anyOf, ok := sch["anyOf"].([]any); ok && !slices.ContainsFunc(anyOf, func(sub any) bool { return s.valid(sub.(map[string]any), v, at) }) {
		fail("anyOf: matches none of %d schemas", len(anyOf))
	}
	if oneOf, ok := sch["oneOf"].([]any); ok {
		n := 0
		for _, sub := range oneOf {
			if s.valid(sub.(map[string]any), v, at) {
				n++
			}
		}
		if n != 1 {
			fail("oneOf: matches %d of %d schemas, want exactly 1", n, len(oneOf))
		}
	}
	if cond, ok := sch["if"].(map[string]any); ok {
		branch := "else"
		if s.valid(cond, v, at) {
			branch = "then"
		}
		if b, ok := sch[branch].(map[string]any); ok {
			s.check(b, v, at, errs)
		}
	}
}

func isType(v any, t string) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		n, ok := v.(float64)
		return ok && n == math.Trunc(n)
	}
	return false
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}
