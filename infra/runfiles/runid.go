package runfiles

import (
	"fmt"
	"strings"
)

// MaxRunIDLen is the longest run id: long enough for a model id, a date
// and a Schedule's timestamp, short enough for any store key and file name.
const MaxRunIDLen = 128

// CheckRunID is the one rule for run ids, applied before anything starts:
// by `glossobench run` to its --run-id and by Prepare to the workflow
// input's run_id (or the workflow id standing in for it), however the
// workflow was started. A run id names the folder runs/<id> of the store, so
// it must stay one folder: 1 to MaxRunIDLen ASCII letters, digits and
// . _ - : (the colon for a Schedule's workflow ids, which end in a
// timestamp), starting with a letter or digit, without "..". No slash, no
// absolute path, no parent folder. The error starts with the quoted id, for
// the caller to put the field's name before it.
func CheckRunID(id string) error {
	const alphabet = "1 to 128 of A-Z a-z 0-9 . _ - : starting with a letter or digit, without \"..\""
	switch {
	case id == "":
		return fmt.Errorf(`"" is empty; a run id is %s`, alphabet)
	case len(id) > MaxRunIDLen:
		return fmt.Errorf("%.20q... is %d bytes long; a run id is %s", id, len(id), alphabet)
	case !alnum(id[0]):
		return fmt.Errorf("%q starts with %q; a run id is %s", id, id[:1], alphabet)
	case strings.Contains(id, ".."):
		return fmt.Errorf("%q contains \"..\"; a run id is %s", id, alphabet)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !alnum(c) && !strings.ContainsRune("._-:", rune(c)) {
			return fmt.Errorf("%q has %q at byte %d; a run id is %s", id, id[i:i+1], i, alphabet)
		}
	}
	return nil
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// RunIDFrom makes a valid run id of free text (a model id) and suffix (a
// valid tail such as "-20261204T190000"): each run of characters outside the
// alphabet becomes one '_', ".." becomes ".", and the text is cut to leave
// room for suffix.
func RunIDFrom(text, suffix string) string {
	var b []byte
	for i := 0; i < len(text) && len(b) < MaxRunIDLen-len(suffix); i++ {
		c := text[i]
		switch {
		case alnum(c) || strings.IndexByte("._-", c) >= 0:
			if c == '.' && len(b) > 0 && b[len(b)-1] == '.' {
				continue
			}
			b = append(b, c)
		case len(b) == 0 || b[len(b)-1] != '_':
			b = append(b, '_')
		}
	}
	s := strings.TrimLeft(string(b), "._-")
	if s == "" {
		s = "run"
	}
	return s + suffix
}
