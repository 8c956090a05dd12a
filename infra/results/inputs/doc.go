// Package inputs reads the files the meta-evaluation commands take:
// calibration anchors (CSV), external leaderboard scores (CSV), instrument
// score files (JSON) and per-item scores (JSONL). Errors name the file, the
// line and the field, so a hand-edited file can be fixed from the message
// alone.
//
// The readers use only the standard library, so their fuzz targets build
// quickly with every dependency instrumented.
package inputs
