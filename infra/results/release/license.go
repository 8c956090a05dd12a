package release

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/glossobench/glossobench/scorers"
)

// Unknown is the licence of a dataset whose config states none and whose
// SOURCE note names none: a licence is never guessed (not from a dataset's
// name, format or file name).
const Unknown = "unknown"

// spdxTag is the line of a SOURCE note that states its dataset's licence,
// as source files state theirs: "SPDX-License-Identifier: CC-BY-SA-4.0".
const spdxTag = "SPDX-License-Identifier:"

// sourceNotes are the file names of a dataset's SOURCE note, looked for in
// the dataset file's folder.
var sourceNotes = []string{"SOURCE.txt", "SOURCE", "SOURCE.md"}

// datasetLicense is a dataset's licence and where it came from: the config's
// license field, else the SPDX-License-Identifier line of the SOURCE note
// beside the dataset file (a relative path is read from baseDir, the config
// file's folder), else Unknown with the reason.
func datasetLicense(d scorers.DatasetConfig, baseDir string) (license, from string) {
	if l := strings.TrimSpace(d.License); l != "" {
		return l, "config"
	}
	if d.Path == "" || strings.Contains(d.Path, "://") {
		return Unknown, "none: the config states no licence and a remote dataset has no SOURCE note to read"
	}
	path := d.Path
	if !filepath.IsAbs(path) {
		if baseDir == "" {
			return Unknown, "none: the config states no licence, and the run does not say which folder " + path + " is relative to"
		}
		path = filepath.Join(baseDir, path)
	}
	dir := filepath.Dir(path)
	for _, name := range sourceNotes {
		note := filepath.Join(dir, name)
		l, err := noteLicense(note)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return Unknown, "none: " + err.Error()
		case l == "":
			return Unknown, fmt.Sprintf("none: the config states no licence and %s has no %s line", note, spdxTag)
		}
		return l, "SOURCE note " + note
	}
	return Unknown, fmt.Sprintf("none: the config states no licence and %s has no SOURCE note (%s)", dir, strings.Join(sourceNotes, ", "))
}

// noteLicense reads the SPDX-License-Identifier line of a SOURCE note: ""
// when it has none, an error when it has two that differ.
func noteLicense(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var found string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), spdxTag)
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch {
		case v == "":
			return "", fmt.Errorf("%s line %d: %s names no licence", path, line, spdxTag)
		case found != "" && v != found:
			return "", fmt.Errorf("%s line %d: a second %s (%s after %s); state one licence or an SPDX expression", path, line, spdxTag, v, found)
		}
		found = v
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return found, nil
}

// Restrictiveness ranks a licence string: higher is more restrictive. The
// order is: non-commercial and no-derivatives > GPL family > share-alike >
// attribution (CC-BY, ODC-BY) > permissive with notice (Apache-2.0, MIT,
// BSD) > public domain (CC0). Unrecognised strings rank above all: a human
// must read them. Unknown has no rank (see MostRestrictive).
func Restrictiveness(license string) int {
	l := strings.ToUpper(strings.NewReplacer(" ", "-", "_", "-").Replace(strings.TrimSpace(license)))
	has := func(s string) bool { return strings.Contains(l, s) }
	switch {
	case has("NC") && has("ND"):
		return 90
	case has("-NC") || has("NONCOMMERCIAL") || has("NON-COMMERCIAL"):
		return 85
	case has("-ND") || has("NODERIV"):
		return 80
	case has("GPL"):
		return 70
	case has("-SA") || has("SHAREALIKE") || has("ODBL"):
		return 60
	case has("CC-BY") || has("ODC-BY"):
		return 40
	case has("APACHE") || has("MIT") || has("BSD") || has("ISC"):
		return 20
	case has("CC0") || has("PUBLIC-DOMAIN") || has("PDDL"):
		return 0
	}
	return 95
}

// MostRestrictive returns the most restrictive of the known licenses (the
// first one on a tie), Unknown when none is known, and "" when there are
// none at all. Whether some were unknown is the caller's to say.
func MostRestrictive(licenses []string) string {
	best, rank := "", -1
	for _, l := range licenses {
		if l == Unknown {
			if best == "" {
				best = Unknown
			}
			continue
		}
		if r := Restrictiveness(l); r > rank {
			best, rank = l, r
		}
	}
	return best
}
