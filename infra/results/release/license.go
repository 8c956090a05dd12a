package release

import (
	"strings"
)

// knownLicenses are the licences recorded in the SOURCE.txt notes of the
// shared datasets, for configs that do not state one. Keys are matched as
// substrings of the dataset name, format or file name, most specific first
// ("sea_ifeval" before "ifeval", "global_mmlu" before "mmlu").
var knownLicenses = []struct{ key, license, note string }{
	{"sea_ifeval", "CC-BY-4.0", "sea_ifeval/SOURCE.txt"},
	{"global_mmlu", "Apache-2.0", "global_mmlu_ms/SOURCE.txt"},
	{"safeguard", "", "safety_seahelm_safeguard/SOURCE.txt: SEA-HELM lists no licence for this benchmark"},
	{"belebele", "CC-BY-SA-4.0", "belebele_ms_en/SOURCE.txt"},
	{"flores", "CC-BY-SA-4.0", "nlg_translation/SOURCE.txt"},
	{"kalahi", "CC-BY-4.0", "cultural_kalahi_tl/SOURCE.txt"},
	{"indonli", "CC-BY-SA-3.0", "nli_indonli/SOURCE.txt"},
	{"mt_bench", "Apache-2.0", "mt_bench/SOURCE.txt"},
	{"ifeval", "Apache-2.0", "ifeval/SOURCE.txt"},
	{"mmlu", "MIT", "mmlu_test/SOURCE.txt"},
}

// KnownLicense looks a dataset up in the SOURCE notes by its name, format or
// file name. ok is false when nothing matches; a match with an empty licence
// means the source states none.
func KnownLicense(name, format, path string) (license, note string, ok bool) {
	for _, s := range []string{name, format, path} {
		s = strings.ToLower(s)
		if s == "" {
			continue
		}
		for _, k := range knownLicenses {
			if strings.Contains(s, k.key) {
				return k.license, k.note, true
			}
		}
	}
	return "", "", false
}

// Unstated is how a dataset without a known licence is listed. It ranks as
// the most restrictive: without a licence nothing may be assumed.
const Unstated = "unstated"

// Restrictiveness ranks a licence string: higher is more restrictive. The
// order is: no licence stated (all rights reserved) > non-commercial and
// no-derivatives > GPL family > share-alike > attribution (CC-BY, ODC-BY) >
// permissive with notice (Apache-2.0, MIT, BSD) > public domain (CC0).
// Unrecognised strings rank just under unstated: a human must read them.
func Restrictiveness(license string) int {
	l := strings.ToUpper(strings.NewReplacer(" ", "-", "_", "-").Replace(strings.TrimSpace(license)))
	has := func(s string) bool { return strings.Contains(l, s) }
	switch {
	case l == "" || l == strings.ToUpper(Unstated) || has("NONE") || has("UNKNOWN"):
		return 100
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

// MostRestrictive returns the most restrictive of licenses (the first one on
// a tie), or "" when there are none.
func MostRestrictive(licenses []string) string {
	best, rank := "", -1
	for _, l := range licenses {
		if r := Restrictiveness(l); r > rank {
			best, rank = l, r
		}
	}
	return best
}
