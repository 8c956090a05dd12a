// Package docs holds the tests that keep the repository's documentation
// true: README.md's length, the methodology's section order and Related
// footer, every relative link of README.md and docs/, and the references
// generated from the code (the config keys and result.json fields of
// docs/SPEC_v1.0.md). Regenerate those with go generate.
package docs

//go:generate go test -run TestSpecReference -update .
