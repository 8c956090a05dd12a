package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/results/leaderboard"
	"github.com/glossobench/glossobench/infra/results/reproduce"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
)

func init() {
	registerIO("reproduce", "rerun a finished run's pins: does the rerun reproduce it within its CI? (spec §5)", reproduceMain)
}

// reproduceMain reruns a finished run with its pins (its config, whose hash
// must be the run's config_hash, and its model) and compares the rerun
// with it; given two run folders it compares them. Exit 0 when every
// headline reproduced, 2 on non-determinism, 1 on error (pins that differ
// included). Non-determinism is also kept as a note on each leaderboard the
// earlier run has a row on (its anchors), beside that row.
func reproduceMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("reproduce", stderr, "reproduce RUN_DIR --config FILE [--run-id ID] | reproduce EARLIER_RUNDIR RERUN_RUNDIR",
		"\nRUN_DIR --config FILE reruns the finished run with the same pins: FILE must hash to",
		"the run's config_hash, the model is the run's (model.spec and model.id of its manifest).",
		"Then, per axis and for ms_public: is the rerun's headline inside the earlier run's 95% CI?",
		"Non-determinism is noted on every leaderboard the earlier run has a row on.",
		"Exit 0 reproduced, 2 non-determinism, 1 on error or when the pins differ.")
	cfgPath := fs.String("config", "", "the run's config (YAML), to rerun RUN_DIR")
	runID := fs.String("run-id", "", "the rerun's run id (default: the run's id, -rerun- and the time)")
	// Exit 2 is the non-determinism verdict here, so a usage error exits 1.
	rest, code, ok := parseArgs(fs, args, anyArgs)
	if !ok {
		return min(code, 1)
	}
	fail := failer(stderr, "reproduce")
	earlier, rerun, err := reproducePair(rest, *cfgPath, *runID, stdout)
	if err != nil {
		return fail(err)
	}
	checks, err := reproduce.Compare(earlier, rerun)
	if err != nil {
		return fail(err)
	}
	drift := reproduce.Print(stdout, checks)
	if len(drift) == 0 {
		return 0
	}
	fmt.Fprintln(stdout, "non-determinism: a headline of the rerun falls outside the earlier run's CI or is missing (spec §5: logged, not papered over)")
	text := fmt.Sprintf("rerun %s with identical pins did not reproduce run %s: %s", rerun.RunID, earlier.RunID, strings.Join(drift, "; "))
	if err := noteBoards(rest[0], earlier, text, stdout); err != nil {
		return fail(fmt.Errorf("the leaderboard note: %w", err))
	}
	return 2
}

// reproducePair reads the earlier run and its rerun: RUN_DIR rerun with
// --config (rerunPins), or two run folders.
func reproducePair(rest []string, cfgPath, runID string, stdout io.Writer) (earlier, rerun *runfiles.Result, err error) {
	switch {
	case len(rest) == 1 && cfgPath != "":
		if earlier, err = readRunDir(rest[0]); err != nil {
			return nil, nil, err
		}
		rerun, err = rerunPins(rest[0], earlier, cfgPath, runID, stdout)
		return earlier, rerun, err
	case len(rest) == 1:
		return nil, nil, errors.New("RUN_DIR alone: give --config FILE, the config the run was made from, to rerun it")
	case len(rest) == 2 && cfgPath == "":
		if earlier, err = readRunDir(rest[0]); err != nil {
			return nil, nil, err
		}
		rerun, err = readRunDir(rest[1])
		return earlier, rerun, err
	}
	return nil, nil, errors.New("want RUN_DIR --config FILE (rerun it) or two run directories (the earlier run and its rerun)")
}

func readRunDir(dir string) (*runfiles.Result, error) {
	f, err := runfiles.Dir(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Result()
}

// rerunPins runs the config at cfgPath again on the earlier run's model,
// once its content hash is the earlier run's config_hash, and returns the
// rerun's result. The run prints its progress and summary as `run` does.
func rerunPins(dir string, earlier *runfiles.Result, cfgPath, runID string, stdout io.Writer) (*runfiles.Result, error) {
	f, err := runfiles.Dir(dir)
	if err != nil {
		return nil, err
	}
	var man runfiles.Manifest
	err = f.Manifest(&man)
	f.Close()
	if errors.Is(err, fs.ErrNotExist) || err == nil && man.Config == nil {
		return nil, fmt.Errorf("%s: no manifest.json with the run's config: its model is not known", dir)
	}
	if err != nil {
		return nil, err
	}
	// What the earlier run took from its command line is in its manifest's
	// config; the rerun takes it again, so the pins can match.
	run := man.Config.Run
	ov := config.Overrides{Model: man.Config.Model.Spec, ModelID: earlier.ModelID, JudgeOverlay: run.JudgeOverlay, ChatTemplate: run.ChatTemplate}
	if run.Limit != nil {
		ov.Limit = *run.Limit
	}
	cfg, err := config.Load(cfgPath, ov)
	if err != nil {
		return nil, err
	}
	hash, err := cfg.ContentHash()
	if err != nil {
		return nil, err
	}
	if hash != earlier.ConfigHash {
		return nil, fmt.Errorf("%s hashes to config_hash %s, run %s was made with %s: not the run's pins (another config, or its datasets changed)", cfgPath, hash, earlier.RunID, earlier.ConfigHash)
	}
	if runID == "" {
		runID = runfiles.RunIDFrom(earlier.RunID, "-rerun-"+time.Now().UTC().Format("20060102T150405"))
	}
	args := []string{"--config", cfgPath, "--model", ov.Model, "--model-id", ov.ModelID, "--run-id", runID}
	if ov.JudgeOverlay {
		args = append(args, "--judge-overlay")
	}
	if ov.ChatTemplate != "" {
		args = append(args, "--chat-template", ov.ChatTemplate)
	}
	if ov.Limit != 0 {
		args = append(args, "--limit", strconv.Itoa(ov.Limit))
	}
	fmt.Fprintf(stdout, "rerunning %s as %s (config_hash %s)\n", earlier.RunID, runID, hash)
	if code := runRun(args); code != 0 {
		return nil, fmt.Errorf("the rerun %s failed (exit %d)", runID, code)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, cfg.Store.URI)
	if err != nil {
		return nil, err
	}
	rf := runfiles.InStore(ctx, st, runID)
	defer rf.Close()
	return rf.Result()
}

// noteBoards keeps text as a non-determinism note beside the earlier run's
// row on every leaderboard its anchors name.
func noteBoards(dir string, earlier *runfiles.Result, text string, stdout io.Writer) error {
	root, err := leaderboard.StoreOfRunDir(dir)
	if err != nil {
		fmt.Fprintf(stdout, "no leaderboard note: %v\n", err)
		return nil
	}
	ctx := context.Background()
	runs, err := store.Open(ctx, root)
	if err != nil {
		return err
	}
	anchors, err := leaderboard.RunAnchors(ctx, runs, earlier.RunID)
	if err != nil {
		return err
	}
	if len(anchors) == 0 {
		fmt.Fprintf(stdout, "no leaderboard note: run %s has no leaderboard row (no anchor in its folder)\n", earlier.RunID)
	}
	for _, a := range anchors {
		board, err := store.Open(ctx, a.BoardStore)
		if err != nil {
			return err
		}
		n := leaderboard.Note{Seq: a.Seq, ModelID: a.ModelID, RunID: a.RunID, Kind: "non-determinism", Text: text}
		if err := leaderboard.AddNote(ctx, board, a.Lang, a.Major, n); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "noted on %s row %d in %s\n", a.Board, a.Seq, board.Describe())
	}
	return nil
}
