package dataset

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// MaxLine is the longest line EachLine reads (a run's prediction file with
// long generations has the longest).
const MaxLine = 256 << 20

// EachLine calls fn with every non-blank line of r, trimmed, and its line
// number, reading a line at a time: the one line reader of JSONL files,
// datasets', response files' and a run's. An error fn returns stops the
// scan and is returned as it is; a read error names name:line (line N when
// name is empty, for callers that name the file themselves).
func EachLine(r io.Reader, name string, fn func(line int, text []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if err := fn(line, text); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if name == "" {
			return fmt.Errorf("line %d: %w", line+1, err)
		}
		return fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return nil
}
