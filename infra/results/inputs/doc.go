// Package inputs reads the files the meta-evaluation commands take:
// calibration anchors (CSV), external leaderboard scores (CSV), instrument
// score files (JSON), per-item scores (JSONL), finished run folders (through
// infra/runfiles) and other instruments' own result files:
// lm-evaluation-harness results (ReadLMEval), SEA-HELM results (ReadSEAHELM)
// and HELM's helm-summarize group tables (ReadHELMGroups). Errors name the
// file, the line and the field, so a hand-edited file can be fixed from the
// message alone.
//
// The readers import nothing of Temporal or the stores: besides the
// standard library, only the run-file types (infra/runfiles, scorers) and
// what those import (the dataset file readers), so their fuzz targets build
// without the server.
package inputs
