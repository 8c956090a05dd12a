// Package axes links every axis plugin into a program: importing it, as the
// config's validation does, registers the seven axes (scorers.AxisNames),
// the way rclone's backend/all links its backends.
package axes

import (
	_ "github.com/glossobench/glossobench/scorers/ifeval"
	_ "github.com/glossobench/glossobench/scorers/mcq"
	_ "github.com/glossobench/glossobench/scorers/mt"
	_ "github.com/glossobench/glossobench/scorers/nlg"
	_ "github.com/glossobench/glossobench/scorers/safety"
)
