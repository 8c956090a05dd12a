package jsonschema

import (
	"strings"
	"testing"
)

const schema = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "required": ["name", "results"],
  "additionalProperties": false,
  "properties": {
    "name": {"type": "string", "pattern": "^[a-z]+$"},
    "kind": {"enum": ["a", "b"]},
    "meta": {"type": "object", "additionalProperties": {"type": "string"}},
    "results": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/result"}},
    "n": {"type": ["null", "integer"]}
  },
  "$defs": {
    "result": {
      "type": "object",
      "required": ["score"],
      "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "source": {"oneOf": [{"properties": {"type": {"const": "url"}}, "required": ["type", "url"]}, {"properties": {"type": {"const": "other"}}, "required": ["type"]}]},
        "range": {"anyOf": [{"type": "string"}, {"type": "number"}]},
        "score_type": {"type": "string"}
      },
      "if": {"properties": {"score_type": {"const": "continuous"}}, "required": ["score_type"]},
      "then": {"required": ["max"]}
    }
  }
}`

// TestValidate: each keyword accepts what it should and names the path and
// the keyword of what it rejects.
func TestValidate(t *testing.T) {
	s, err := Parse([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	good := `{"name": "abc", "kind": "a", "meta": {"x": "y"}, "n": null, "results": [{"score": 0.5, "source": {"type": "other"}, "range": 3}, {"score": 1, "score_type": "continuous", "max": 1}]}`
	if errs, err := s.Validate([]byte(good)); err != nil || len(errs) != 0 {
		t.Fatalf("good document: %v %v", errs, err)
	}
	for _, c := range []struct{ doc, want string }{
		{`{"results": [{"score": 0}]}`, "/: required: name is missing"},
		{`{"name": "abc", "results": [], "extra": 1}`, "/: additionalProperties: extra is not allowed"},
		{`{"name": "abc", "results": []}`, "/results: minItems: 0 < 1"},
		{`{"name": "ABC", "results": [{"score": 0}]}`, `/name: pattern: "ABC" does not match`},
		{`{"name": "abc", "kind": "c", "results": [{"score": 0}]}`, "/kind: enum: c is not one of [a b]"},
		{`{"name": "abc", "meta": {"x": 1}, "results": [{"score": 0}]}`, "/meta/x: type: want string, got integer"},
		{`{"name": "abc", "n": 1.5, "results": [{"score": 0}]}`, "/n: type: want null or integer, got number"},
		{`{"name": "abc", "results": [{"score": 1.5}]}`, "/results/0/score: maximum: 1.5 > 1"},
		{`{"name": "abc", "results": [{"score": -1}]}`, "/results/0/score: minimum: -1 < 0"},
		{`{"name": "abc", "results": [{}]}`, "/results/0: required: score is missing"},
		{`{"name": "abc", "results": [{"score": 0, "source": {"type": "url"}}]}`, "/results/0/source: oneOf: matches 0 of 2 schemas"},
		{`{"name": "abc", "results": [{"score": 0, "range": true}]}`, "/results/0/range: anyOf: matches none of 2 schemas"},
		{`{"name": "abc", "results": [{"score": 0, "score_type": "continuous"}]}`, "/results/0: required: max is missing"},
	} {
		errs, err := s.Validate([]byte(c.doc))
		if err != nil || !strings.Contains(strings.Join(errs, "\n"), c.want) {
			t.Errorf("%s: %v %v, want %q", c.doc, errs, err, c.want)
		}
	}
	if _, err := Parse([]byte(`{"properties": {"a": {"type": "string", "format": "date"}}}`)); err == nil || !strings.Contains(err.Error(), `#/properties/a: keyword "format" is not supported`) {
		t.Errorf("unsupported keyword: %v", err)
	}
}
