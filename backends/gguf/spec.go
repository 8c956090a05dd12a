package gguf

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// ParseSpec splits the part of a model spec after "gguf:" into the file path
// and options: PATH, optionally followed by ?chat=FORMAT&threads=N&ctx=N.
// For example "models/tiny.gguf?chat=qa".
func ParseSpec(spec string) (string, Options, error) {
	var opt Options
	path, query, _ := strings.Cut(spec, "?")
	if path == "" {
		return "", opt, fmt.Errorf("gguf spec %q: empty path", spec)
	}
	vals, err := url.ParseQuery(query)
	if err != nil {
		return "", opt, fmt.Errorf("gguf spec %q: %w", spec, err)
	}
	for key, vs := range vals {
		v := vs[len(vs)-1]
		switch key {
		case "chat":
			if _, ok := namedChatFormat(v); !ok {
				return "", opt, fmt.Errorf("gguf spec %q: unknown chat format %q (want one of %s)", spec, v, strings.Join(ChatFormats, ", "))
			}
			opt.ChatFormat = v
		case "threads", "ctx":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return "", opt, fmt.Errorf("gguf spec %q: %s=%q is not a non-negative integer", spec, key, v)
			}
			if key == "threads" {
				opt.Threads = n
			} else {
				opt.ContextSize = n
			}
		default:
			return "", opt, fmt.Errorf("gguf spec %q: unknown option %q (want chat, threads or ctx)", spec, key)
		}
	}
	return path, opt, nil
}

// OpenSpec opens the model a spec (without its "gguf:" prefix) names.
func OpenSpec(spec string) (*Model, error) {
	path, opt, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return Open(path, opt)
}
