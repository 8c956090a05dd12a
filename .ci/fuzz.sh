#!/usr/bin/env bash
# Runs every Go fuzz target of the module for a short time each, so CI
# catches a parser that panics or hangs on hostile input (the nightly
# `task fuzz` runs them for minutes).
#
#   FUZZTIME   how long each target fuzzes (-fuzztime; default 5s)
#   FUZZ_JOBS  targets fuzzed at once, one fuzzing worker each (default 2);
#              fuzztime is wall time, so lanes shorten the whole run
#
# Each package with a Fuzz function is built once as an instrumented test
# binary (`go test -c -fuzz`; later packages build while earlier ones fuzz),
# its targets are listed with -test.list '^Fuzz' (what `go test -list
# '^Fuzz'` runs), and each target is fuzzed
# from the package folder, so seeds come from its testdata/fuzz and a
# crashing input is saved there. A failing target prints its output and the
# script exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export FUZZTIME=${FUZZTIME:-5s}
jobs=${FUZZ_JOBS:-2}
work=$(mktemp -d /tmp/glossobench-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
export FUZZCACHE
FUZZCACHE=$(go env GOCACHE)/fuzz
start=$SECONDS

# Packages with the most targets first: while their targets fuzz, the
# packages after them build.
mapfile -t dirs < <(grep -r --include='*_test.go' '^func Fuzz' . | cut -d: -f1 | xargs -r -n1 dirname |
	sort | uniq -c | sort -k1,1nr -k2 | awk '{print $2}')
if [ ${#dirs[@]} -eq 0 ]; then
	echo "fuzz: no fuzz targets found"
	exit 1
fi
# list_targets builds each package's instrumented test binary and prints
# "DIR BINARY PACKAGE TARGET" per target as soon as the binary is ready, so
# fuzzing starts while later packages still build.
list_targets() {
	local d pkg bin f
	for d in "${dirs[@]}"; do
		pkg=$(go list "$d")
		bin=$work/$(echo "$pkg" | tr / _).test
		go test -c -fuzz '^Fuzz' -o "$bin" "$d" >&2
		for f in $(cd "$d" && "$bin" -test.list '^Fuzz' | grep '^Fuzz'); do
			echo "$root/${d#./} $bin $pkg $f"
			echo "$pkg $f" >>"$work/listed"
		done
	done
}
echo "fuzz: ${#dirs[@]} packages with fuzz targets; $FUZZTIME per target, $jobs at a time"

fuzz_one() {
	local dir=$1 bin=$2 pkg=$3 target=$4 log t0 try
	log=$(mktemp)
	t0=$SECONDS
	for try in 1 2; do
		if (cd "$dir" && "$bin" -test.run '^$' -test.fuzz "^${target}\$" -test.fuzztime "$FUZZTIME" \
			-test.parallel 1 -test.fuzzcachedir "$FUZZCACHE/$pkg") >"$log" 2>&1; then
			echo "ok   $pkg $target ($((SECONDS - t0))s)"
			rm -f "$log"
			return 0
		fi
		# Go 1.26's fuzz coordinator can report its own -fuzztime deadline
		# as a failure (golang/go#75804, fixed in Go 1.27): no input was
		# written, so it is no finding. Try once more, then let it pass.
		if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
			[ "$try" = 1 ] && continue
			echo "ok   $pkg $target ($((SECONDS - t0))s; twice the fuzztime-deadline race of golang/go#75804, no failing input)"
			rm -f "$log"
			return 0
		fi
		break
	done
	echo "FAIL $pkg $target"
	cat "$log"
	rm -f "$log"
	return 255 # makes xargs stop starting targets
}
export -f fuzz_one

list_targets | xargs -P "$jobs" -L 1 bash -c 'fuzz_one "$@"' _
echo "fuzz: all $(grep -c . "$work/listed") targets passed in $((SECONDS - start))s"
