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

// jsonValid is encoding/json's verdict; both it and Python allow the same
// four whitespace characters around the value.
func jsonValid(s string) bool { return json.Valid([]byte(s)) }
