package ifeval

import (
	"encoding/json"
	"strings"
)

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// jsonValid is encoding/json's verdict, trimmed as Python trims (Python
// json whitespace is the same four characters).
func jsonValid(s string) bool { return json.Valid([]byte(s)) }
