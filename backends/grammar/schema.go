package grammar

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// SchemaGBNF converts a JSON Schema into the GBNF grammar llama.cpp's
// json_schema_to_grammar (common/json-schema-to-grammar.cpp, node-llama-cpp
// 3.21.1) makes of it, for the subset GlossoBench's judges use:
//
//   - objects with properties, required and additionalProperties false (an
//     object schema without additionalProperties admits no other keys, as
//     in llama.cpp; properties come in the order of their names, the order
//     encoding/json sends a map to llama-server in);
//   - strings, with minLength and maxLength;
//   - integers, with minimum, maximum, exclusiveMinimum and exclusiveMaximum;
//   - numbers, booleans and null;
//   - enum and const of strings, numbers, booleans and null;
//   - annotations (title, description, default, examples, $schema, $comment).
//
// Any other keyword is an error naming it and where it is, rather than a
// constraint silently dropped. Whitespace between tokens follows llama.cpp's
// space rule, so the replies a grammar admits are the same as llama-server's.
func SchemaGBNF(schema map[string]any) (string, error) {
	c := &converter{rules: map[string]string{"space": spaceRule}}
	if err := checkSchema(schema, "the schema"); err != nil {
		return "", fmt.Errorf("json_schema: %w", err)
	}
	if _, err := c.visit(schema, ""); err != nil {
		return "", fmt.Errorf("json_schema: %w", err)
	}
	names := make([]string, 0, len(c.rules))
	for n := range c.rules {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s ::= %s\n", n, c.rules[n])
	}
	return b.String(), nil
}

// FromSchema is SchemaGBNF parsed.
func FromSchema(schema map[string]any) (*Grammar, error) {
	src, err := SchemaGBNF(schema)
	if err != nil {
		return nil, err
	}
	return Parse(src)
}

const spaceRule = `| " " | "\n"{1,2} [ \t]{0,20}`

type builtin struct {
	content string
	deps    []string
}

// primitives are llama.cpp's PRIMITIVE_RULES.
var primitives = map[string]builtin{
	"boolean":       {`("true" | "false")`, nil},
	"decimal-part":  {`[0-9]{1,16}`, nil},
	"integral-part": {`[0] | [1-9] [0-9]{0,15}`, nil},
	"number":        {`("-"? integral-part) ("." decimal-part)? ([eE] [-+]? integral-part)?`, []string{"integral-part", "decimal-part"}},
	"integer":       {`("-"? integral-part)`, []string{"integral-part"}},
	"value":         {`object | array | string | number | boolean | null`, []string{"object", "array", "string", "number", "boolean", "null"}},
	"object":        {`"{" space ( string ":" space value ("," space string ":" space value)* )? space "}"`, []string{"string", "value"}},
	"array":         {`"[" space ( value ("," space value)* )? space "]"`, []string{"value"}},
	"char":          {`[^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})`, nil},
	"string":        {`"\"" char* "\""`, []string{"char"}},
	"null":          {`"null"`, nil},
}

// reserved are the names a schema's rules must not take (is_reserved_name,
// with the string formats llama.cpp also reserves).
func reserved(name string) bool {
	_, ok := primitives[name]
	return ok || name == "root" || slices.Contains([]string{"date", "time", "date-time", "date-string", "time-string", "date-time-string"}, name)
}

type converter struct {
	rules map[string]string
}

var invalidRuleChars = regexp.MustCompile(`[^a-zA-Z0-9-]+`)

// addRule is _add_rule: a rule under name, or name0, name1 … when name is
// taken by a different rule.
func (c *converter) addRule(name, rule string) string {
	esc := invalidRuleChars.ReplaceAllString(name, "-")
	if r, ok := c.rules[esc]; !ok || r == rule {
		c.rules[esc] = rule
		return esc
	}
	i := 0
	for {
		r, ok := c.rules[esc+strconv.Itoa(i)]
		if !ok || r == rule {
			break
		}
		i++
	}
	key := esc + strconv.Itoa(i)
	c.rules[key] = rule
	return key
}

func (c *converter) addPrimitive(name string, b builtin) string {
	n := c.addRule(name, b.content)
	for _, dep := range b.deps {
		if _, ok := c.rules[dep]; !ok {
			c.addPrimitive(dep, primitives[dep])
		}
	}
	return n
}

// formatLiteral is format_literal: a GBNF string literal.
func formatLiteral(s string) string {
	r := strings.NewReplacer("\r", `\r`, "\n", `\n`, `"`, `\"`, `\`, `\\`)
	return `"` + r.Replace(s) + `"`
}

// dumpJSON writes a scalar as nlohmann::json's dump() does.
func dumpJSON(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(x), nil
	case string:
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range x {
			switch r {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				if r < 0x20 {
					fmt.Fprintf(&b, `\u%04x`, r)
				} else {
					b.WriteRune(r)
				}
			}
		}
		b.WriteByte('"')
		return b.String(), nil
	}
	if i, ok := toInt(v); ok {
		return strconv.FormatInt(i, 10), nil
	}
	if f, ok := toFloat(v); ok {
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("%v (%T) is not a string, number, boolean or null", v, v)
}

// toInt reads an integral JSON number, whether it came from Go code (int)
// or from encoding/json (float64).
func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<62 {
			return int64(x), true
		}
	case json.Number:
		i, err := x.Int64()
		return i, err == nil
	}
	return 0, false
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case float32:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// annotations constrain nothing and are accepted anywhere.
var annotations = []string{"title", "description", "default", "examples", "$schema", "$comment", "$id", "deprecated", "readOnly", "writeOnly"}

// checkSchema rejects what SchemaGBNF would otherwise ignore or cannot do,
// naming the keyword and where it is (at is a readable path).
func checkSchema(s map[string]any, at string) error {
	typ := ""
	if t, ok := s["type"]; ok {
		ts, isStr := t.(string)
		if !isStr {
			return fmt.Errorf("%s: type %v is not supported (only one type name, not a list)", at, t)
		}
		if !slices.Contains([]string{"object", "string", "integer", "number", "boolean", "null"}, ts) {
			return fmt.Errorf("%s: type %q is not supported (object, string, integer, number, boolean or null)", at, ts)
		}
		typ = ts
	}
	_, hasEnum := s["enum"]
	_, hasConst := s["const"]
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := s[k]
		if k == "type" || slices.Contains(annotations, k) {
			continue
		}
		if (hasEnum || hasConst) && k != "enum" && k != "const" {
			return fmt.Errorf("%s: %s together with enum or const would be ignored (llama.cpp's converter uses only the enum); drop one", at, k)
		}
		switch k {
		case "enum":
			vals, ok := v.([]any)
			if !ok || len(vals) == 0 {
				return fmt.Errorf("%s: enum must be a non-empty list", at)
			}
			for _, e := range vals {
				if _, err := dumpJSON(e); err != nil {
					return fmt.Errorf("%s: enum value %w", at, err)
				}
			}
		case "const":
			if _, err := dumpJSON(v); err != nil {
				return fmt.Errorf("%s: const %w", at, err)
			}
			if hasEnum {
				return fmt.Errorf("%s: both enum and const; give one", at)
			}
		case "properties", "required", "additionalProperties":
			if typ != "" && typ != "object" {
				return fmt.Errorf("%s: %s applies to objects, not to type %q", at, k, typ)
			}
		case "minLength", "maxLength":
			if typ != "string" {
				return fmt.Errorf("%s: %s applies to type \"string\" only", at, k)
			}
			if n, ok := toInt(v); !ok || n < 0 || n > maxRepetition {
				return fmt.Errorf("%s: %s must be an integer from 0 to %d", at, k, maxRepetition)
			}
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			if typ == "number" {
				return fmt.Errorf("%s: %s on a number is not supported (llama.cpp's converter ignores it, so llama-server would not enforce it either); use type integer or an enum", at, k)
			}
			if typ != "integer" {
				return fmt.Errorf("%s: %s applies to type \"integer\" only", at, k)
			}
			if _, ok := toInt(v); !ok {
				return fmt.Errorf("%s: %s must be an integer", at, k)
			}
		default:
			return fmt.Errorf("%s: keyword %q is not supported (supported: type, properties, required, additionalProperties false, enum, const, minLength, maxLength, minimum, maximum, exclusiveMinimum, exclusiveMaximum)", at, k)
		}
	}
	if _, ok := s["minimum"]; ok {
		if _, ok := s["exclusiveMinimum"]; ok {
			return fmt.Errorf("%s: both minimum and exclusiveMinimum; give one", at)
		}
	}
	if _, ok := s["maximum"]; ok {
		if _, ok := s["exclusiveMaximum"]; ok {
			return fmt.Errorf("%s: both maximum and exclusiveMaximum; give one", at)
		}
	}
	if ap, ok := s["additionalProperties"]; ok && ap != false {
		return fmt.Errorf("%s: additionalProperties %v is not supported (only false)", at, ap)
	}
	props := map[string]any{}
	if p, ok := s["properties"]; ok {
		if props, ok = p.(map[string]any); !ok {
			return fmt.Errorf("%s: properties must be an object", at)
		}
	}
	pnames := make([]string, 0, len(props))
	for n := range props {
		pnames = append(pnames, n)
	}
	sort.Strings(pnames)
	for _, n := range pnames {
		sub, ok := props[n].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: properties.%s must be a schema object", at, n)
		}
		if err := checkSchema(sub, at+" properties."+n); err != nil {
			return err
		}
	}
	if r, ok := s["required"]; ok {
		list, ok := r.([]any)
		if !ok {
			if ss, isStrs := r.([]string); isStrs {
				for _, x := range ss {
					list = append(list, x)
				}
			} else {
				return fmt.Errorf("%s: required must be a list of property names", at)
			}
		}
		for _, x := range list {
			n, ok := x.(string)
			if !ok {
				return fmt.Errorf("%s: required must be a list of property names", at)
			}
			if _, ok := props[n]; !ok {
				return fmt.Errorf("%s: required names %q, which is not in properties", at, n)
			}
		}
	}
	if lo, ok := s["minLength"]; ok {
		if hi, ok := s["maxLength"]; ok {
			a, _ := toInt(lo)
			b, _ := toInt(hi)
			if a > b {
				return fmt.Errorf("%s: minLength %d is above maxLength %d", at, a, b)
			}
		}
	}
	return nil
}

func requiredNames(s map[string]any) map[string]bool {
	req := map[string]bool{}
	switch r := s["required"].(type) {
	case []any:
		for _, x := range r {
			if n, ok := x.(string); ok {
				req[n] = true
			}
		}
	case []string:
		for _, n := range r {
			req[n] = true
		}
	}
	return req
}

// visit is the converter's visit for the checked subset.
func (c *converter) visit(s map[string]any, name string) (string, error) {
	typ, _ := s["type"].(string)
	ruleName := name
	if reserved(name) {
		ruleName = name + "-"
	} else if name == "" {
		ruleName = "root"
	}
	if v, ok := s["const"]; ok {
		lit, err := dumpJSON(v)
		if err != nil {
			return "", err
		}
		return c.addRule(ruleName, formatLiteral(lit)), nil
	}
	if vals, ok := s["enum"].([]any); ok {
		alts := make([]string, len(vals))
		for i, v := range vals {
			lit, err := dumpJSON(v)
			if err != nil {
				return "", err
			}
			alts[i] = formatLiteral(lit)
		}
		return c.addRule(ruleName, "("+strings.Join(alts, " | ")+")"), nil
	}
	_, hasProps := s["properties"]
	_, hasAdditional := s["additionalProperties"]
	if (typ == "" || typ == "object") && (hasProps || hasAdditional) {
		rule, err := c.objectRule(s, name)
		if err != nil {
			return "", err
		}
		return c.addRule(ruleName, rule), nil
	}
	_, hasMinLen := s["minLength"]
	_, hasMaxLen := s["maxLength"]
	if typ == "string" && (hasMinLen || hasMaxLen) {
		char := c.addPrimitive("char", primitives["char"])
		lo, hi := int64(0), int64(math.MaxInt)
		if v, ok := toInt(s["minLength"]); ok {
			lo = v
		}
		if v, ok := toInt(s["maxLength"]); ok {
			hi = v
		}
		return c.addRule(ruleName, `"\"" `+repetition(char, int(lo), int(hi))+` "\""`), nil
	}
	if typ == "integer" {
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		bounded := false
		if v, ok := toInt(s["minimum"]); ok {
			lo, bounded = v, true
		} else if v, ok := toInt(s["exclusiveMinimum"]); ok {
			lo, bounded = v+1, true
		}
		if v, ok := toInt(s["maximum"]); ok {
			hi, bounded = v, true
		} else if v, ok := toInt(s["exclusiveMaximum"]); ok {
			hi, bounded = v-1, true
		}
		if bounded {
			var b strings.Builder
			b.WriteString("(")
			minMaxInt(lo, hi, &b, 16, true)
			b.WriteString(")")
			return c.addRule(ruleName, b.String()), nil
		}
	}
	if typ == "" || typ == "object" {
		if typ == "" && len(s) > 0 {
			// Only annotations: any JSON value, as llama.cpp does.
			return c.addRule(ruleName, c.addPrimitive("value", primitives["value"])), nil
		}
		return c.addRule(ruleName, c.addPrimitive("object", primitives["object"])), nil
	}
	prim := typ
	if ruleName == "root" {
		prim = "root"
	}
	return c.addPrimitive(prim, primitives[typ]), nil
}

// objectRule is _build_object_rule without additional properties: the
// required properties in order, then the optional ones, each optional after
// the one before.
func (c *converter) objectRule(s map[string]any, name string) (string, error) {
	props, _ := s["properties"].(map[string]any)
	req := requiredNames(s)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	sub := func(suffix string) string {
		if name == "" {
			return suffix
		}
		return name + "-" + suffix
	}
	kv := map[string]string{}
	var required, optional []string
	for _, n := range names {
		ruleName, err := c.visit(props[n].(map[string]any), sub(n))
		if err != nil {
			return "", err
		}
		key, _ := dumpJSON(n)
		kv[n] = c.addRule(sub(n)+"-kv", formatLiteral(key)+` space ":" space `+ruleName)
		if req[n] {
			required = append(required, n)
		} else {
			optional = append(optional, n)
		}
	}
	if len(required) == 0 && len(optional) == 0 {
		return `"{" space "}"`, nil
	}
	rule := `"{" space `
	for i, n := range required {
		if i > 0 {
			rule += ` "," space `
		}
		rule += kv[n]
	}
	if len(optional) > 0 {
		rule += " ("
		if len(required) > 0 {
			rule += ` "," space ( `
		}
		var rest func(ks []string, firstOptional bool) string
		rest = func(ks []string, firstOptional bool) string {
			if len(ks) == 0 {
				return ""
			}
			k := ks[0]
			var res string
			if firstOptional {
				res = `( "," space ` + kv[k] + ` )?`
			} else {
				res = kv[k]
			}
			if len(ks) > 1 {
				res += " " + c.addRule(sub(k)+"-rest", rest(ks[1:], true))
			}
			return res
		}
		for i := range optional {
			if i > 0 {
				rule += " | "
			}
			rule += rest(optional[i:], false)
		}
		if len(required) > 0 {
			rule += " )"
		}
		rule += " )?"
	}
	return rule + ` space "}"`, nil
}

// repetition is build_repetition without a separator.
func repetition(item string, lo, hi int) string {
	hasMax := hi != math.MaxInt
	switch {
	case hi == 0:
		return ""
	case lo == 0 && hi == 1:
		return item + "?"
	case lo == 1 && !hasMax:
		return item + "+"
	case lo == 0 && !hasMax:
		return item + "*"
	}
	out := item + "{" + strconv.Itoa(lo) + ","
	if hasMax {
		out += strconv.Itoa(hi)
	}
	return out + "}"
}

// minMaxInt is build_min_max_int: alternatives matching the decimal
// integers from lo to hi (math.MinInt64 and math.MaxInt64 for no bound).
func minMaxInt(lo, hi int64, out *strings.Builder, decimalsLeft int, topLevel bool) {
	hasMin, hasMax := lo != math.MinInt64, hi != math.MaxInt64
	digitRange := func(from, to byte) {
		out.WriteString("[")
		if from == to {
			out.WriteByte(from)
		} else {
			out.WriteByte(from)
			out.WriteString("-")
			out.WriteByte(to)
		}
		out.WriteString("]")
	}
	moreDigits := func(minD, maxD int) {
		out.WriteString("[0-9]")
		if minD == maxD && minD == 1 {
			return
		}
		out.WriteString("{" + strconv.Itoa(minD))
		if maxD != minD {
			out.WriteString(",")
			if maxD != math.MaxInt {
				out.WriteString(strconv.Itoa(maxD))
			}
		}
		out.WriteString("}")
	}
	var uniformRange func(from, to string)
	uniformRange = func(from, to string) {
		i := 0
		for i < len(from) && i < len(to) && from[i] == to[i] {
			i++
		}
		if i > 0 {
			out.WriteString(`"` + from[:i] + `"`)
		}
		if i < len(from) && i < len(to) {
			if i > 0 {
				out.WriteString(" ")
			}
			subLen := len(from) - i - 1
			if subLen > 0 {
				fromSub, toSub := from[i+1:], to[i+1:]
				zeros, nines := strings.Repeat("0", subLen), strings.Repeat("9", subLen)
				toReached := false
				out.WriteString("(")
				if fromSub == zeros {
					digitRange(from[i], to[i]-1)
					out.WriteString(" ")
					moreDigits(subLen, subLen)
				} else {
					out.WriteString("[" + string(from[i]) + "] ")
					out.WriteString("(")
					uniformRange(fromSub, nines)
					out.WriteString(")")
					if from[i] < to[i]-1 {
						out.WriteString(" | ")
						if toSub == nines {
							digitRange(from[i]+1, to[i])
							toReached = true
						} else {
							digitRange(from[i]+1, to[i]-1)
						}
						out.WriteString(" ")
						moreDigits(subLen, subLen)
					}
				}
				if !toReached {
					out.WriteString(" | ")
					digitRange(to[i], to[i])
					out.WriteString(" ")
					uniformRange(zeros, toSub)
				}
				out.WriteString(")")
			} else {
				out.WriteString("[" + string(from[i]) + "-" + string(to[i]) + "]")
			}
		}
	}

	if hasMin && hasMax {
		if lo < 0 && hi < 0 {
			out.WriteString(`"-" (`)
			minMaxInt(-hi, -lo, out, decimalsLeft, true)
			out.WriteString(")")
			return
		}
		if lo < 0 {
			out.WriteString(`"-" (`)
			minMaxInt(0, -lo, out, decimalsLeft, true)
			out.WriteString(") | ")
			lo = 0
		}
		minS, maxS := strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10)
		for digits := len(minS); digits < len(maxS); digits++ {
			uniformRange(minS, strings.Repeat("9", digits))
			minS = "1" + strings.Repeat("0", digits)
			out.WriteString(" | ")
		}
		uniformRange(minS, maxS)
		return
	}
	lessDecimals := max(decimalsLeft-1, 1)
	if hasMin {
		switch {
		case lo < 0:
			out.WriteString(`"-" (`)
			minMaxInt(math.MinInt64, -lo, out, decimalsLeft, false)
			out.WriteString(") | [0] | [1-9] ")
			moreDigits(0, decimalsLeft-1)
		case lo == 0:
			if topLevel {
				out.WriteString("[0] | [1-9] ")
				moreDigits(0, lessDecimals)
			} else {
				moreDigits(1, decimalsLeft)
			}
		case lo <= 9:
			c := byte('0' + lo)
			rangeStart := byte('0')
			if topLevel {
				rangeStart = '1'
			}
			if c > rangeStart {
				digitRange(rangeStart, c-1)
				out.WriteString(" ")
				moreDigits(1, lessDecimals)
				out.WriteString(" | ")
			}
			digitRange(c, '9')
			out.WriteString(" ")
			moreDigits(0, lessDecimals)
		default:
			minS := strconv.FormatInt(lo, 10)
			n := len(minS)
			c := minS[0]
			if c > '1' {
				start := byte('0')
				if topLevel {
					start = '1'
				}
				digitRange(start, c-1)
				out.WriteString(" ")
				moreDigits(n, lessDecimals)
				out.WriteString(" | ")
			}
			digitRange(c, c)
			out.WriteString(" (")
			rest, _ := strconv.ParseInt(minS[1:], 10, 64)
			minMaxInt(rest, math.MaxInt64, out, lessDecimals, false)
			out.WriteString(")")
			if c < '9' {
				out.WriteString(" | ")
				digitRange(c+1, '9')
				out.WriteString(" ")
				moreDigits(n-1, lessDecimals)
			}
		}
		return
	}
	// hasMax only
	if hi >= 0 {
		if topLevel {
			out.WriteString(`"-" [1-9] `)
			moreDigits(0, lessDecimals)
			out.WriteString(" | ")
		}
		minMaxInt(0, hi, out, decimalsLeft, true)
	} else {
		out.WriteString(`"-" (`)
		minMaxInt(-hi, math.MaxInt64, out, decimalsLeft, false)
		out.WriteString(")")
	}
}
