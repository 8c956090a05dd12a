package main

import (
	"fmt"
	"io"

	"github.com/glossobench/glossobench/infra/results/reproduce"
	"github.com/glossobench/glossobench/infra/runfiles"
)

func init() {
	registerIO("reproduce", "did a rerun with identical pins reproduce the earlier run within its CI? (spec §5)", reproduceMain)
}

// reproduceMain compares a rerun's run folder with the earlier run's: the
// rerun is made as spec §8 says, glossobench run with the same config and
// model. Exit 0 when every headline reproduced, 2 on non-determinism, 1 on
// error (pins that differ included).
func reproduceMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("reproduce", stderr, "reproduce EARLIER_RUNDIR RERUN_RUNDIR",
		"\nPer axis and for ms_public: is the rerun's headline inside the earlier run's 95% CI?",
		"Exit 0 reproduced, 2 non-determinism, 1 on error or when the pins differ.")
	// Exit 2 is the non-determinism verdict here, so a usage error exits 1.
	rest, code, ok := parseArgs(fs, args, anyArgs)
	if !ok {
		return min(code, 1)
	}
	if len(rest) != 2 {
		usageError(fs, "want two run directories: the earlier run and its rerun")
		return 1
	}
	var res [2]*runfiles.Result
	for i, dir := range rest {
		f, err := runfiles.Dir(dir)
		if err == nil {
			res[i], err = f.Result()
			f.Close()
		}
		if err != nil {
			fmt.Fprintf(stderr, "glossobench reproduce: %v\n", err)
			return 1
		}
	}
	checks, err := reproduce.Compare(res[0], res[1])
	if err != nil {
		fmt.Fprintf(stderr, "glossobench reproduce: %v\n", err)
		return 1
	}
	code = 0
	for _, c := range checks {
		ci := "no CI"
		if c.CI95 != nil {
			ci = fmt.Sprintf("CI [%.4f, %.4f]", c.CI95[0], c.CI95[1])
		}
		fmt.Fprintf(stdout, "%-10s earlier %s  rerun %s  %s  %s\n", c.Name, fmtOpt(c.Earlier), fmtOpt(c.Rerun), ci, c.Verdict)
		if c.Verdict != reproduce.Reproduced {
			code = 2
		}
	}
	if code == 2 {
		fmt.Fprintln(stdout, "non-determinism: a headline of the rerun falls outside the earlier run's CI or is missing (spec §5: logged, not papered over)")
	}
	return code
}
