#!/usr/bin/env bash
# Dedup screening scaled across workers and hosts (issue 32): one corpus
# with planted items, screened (a) in one process by `glossobench dedup
# --workers 1` and `--workers 2`, and (b) through Temporal by an EvalRun
# whose config names the corpus (its ScreenCorpus child fans ScreenShard
# activities out), on 1 and then 2 `glossobench worker` hosts: each worker
# in a network namespace of its own, beside a Temporal server
# (`glossobench dev --no-worker`) in another, joined by a bridge, as in
# docs/OPERATOR.md. Every host sees the corpus at the same path (one file
# system). Prints wall and CPU seconds, MB/s and what each screen found.
#
#   testdata/dedup/scale.sh [CORPUS_MB] [OUTDIR]
#
# CORPUS_MB defaults to 20000 (MiB, as testdata/dedup/gen counts; the table
# prints MB = 10^6 bytes); OUTDIR to /tmp/glossobench-dedup-scale, never the
# repository. The corpus is deleted at the end unless KEEP=1 (a kept corpus
# of the right size is reused). Other settings, from the environment:
#   ITEMS=444          eval items generated (the quick start's count)
#   HOST_CPUS=1        GOMAXPROCS of each worker host: 1 makes a worker a
#                      one-core host, so 2 hosts need the 2 cores of this
#                      machine; the one-process runs keep the default
#   PARALLEL_SHARDS=8  run.parallel_shards, the ScreenShard activities in flight
#   CAT=0              skip the `cat CORPUS > /dev/null` read-ceiling row
#   GLOSSOBENCH=PATH   use a built binary instead of building one
# Part (b) needs root (network namespaces) and iproute2; without them it is
# skipped and says so. Its screen-stage rows need the Temporal CLI
# ($GLOSSOBENCH_TEMPORAL_CLI, else ~/.cache/glossobench/bin/temporal).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
MB=${1:-20000}
OUT=${2:-/tmp/glossobench-dedup-scale}
ITEMS=${ITEMS:-444}
HOST_CPUS=${HOST_CPUS:-1}
PARALLEL_SHARDS=${PARALLEL_SHARDS:-8}
TEMPORAL_CLI=${GLOSSOBENCH_TEMPORAL_CLI:-$HOME/.cache/glossobench/bin/temporal}
case $OUT in "$REPO"|"$REPO"/*) echo "OUTDIR $OUT is inside the repository; give a folder outside it" >&2; exit 2 ;; esac
mkdir -p "$OUT"

# Names of part (b): namespaces gbs-*, veth gbsv-* (under 15 characters),
# bridge gbs-br0 on 10.79.0.0/24 (the cluster test uses 10.77, the
# recovery test 10.78).
BR=gbs-br0
NET=10.79.0
HOSTS="temporal:2 w1:11 w2:12"
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ "$(id -u)" = 0 ] && command -v ip >/dev/null 2>&1; then
		for h in $HOSTS; do
			n=${h%%:*}
			ip link del "gbsv-$n" 2>/dev/null || true
			ip netns del "gbs-$n" 2>/dev/null || true
		done
		ip link del "$BR" 2>/dev/null || true
	fi
	if [ "${KEEP:-0}" != 1 ]; then rm -f "$OUT/corpus.txt"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the corpus ---------------------------------------------------------
want=$((MB << 20))
have=$(stat -c %s "$OUT/corpus.txt" 2>/dev/null || echo 0)
if [ "$have" -lt "$want" ] || [ "$have" -gt $((want + (1 << 20))) ] || [ ! -f "$OUT/planted.tsv" ] || [ "$(wc -l < "$OUT/items.jsonl" 2>/dev/null || echo 0)" != "$ITEMS" ]; then
	go run ./testdata/dedup/gen -out "$OUT" -mb "$MB" -items "$ITEMS"
fi
BIN=${GLOSSOBENCH:-$OUT/glossobench}
if [ -z "${GLOSSOBENCH:-}" ]; then
	go build -o "$BIN" ./cmd/glossobench
fi
CORPUS=$OUT/corpus.txt
BYTES=$(stat -c %s "$CORPUS")
CMB=$(awk -v b="$BYTES" 'BEGIN { printf "%.1f", b / 1e6 }')
PLANTED=$(wc -l < "$OUT/planted.tsv")

# The run config: the generated items as one MCQ dataset (constant options:
# the model's answers do not matter here) and four Global-MMLU items the
# synthetic corpus cannot contain, so something is kept however many of the
# generated items a large corpus holds. `glossobench dedup --items` reads
# the same config, so both screen the same items under the same ids.
cat > "$OUT/run.yaml" <<EOF
model: {spec: "gguf:$REPO/testdata/models/tiny-llama/tiny-llama.gguf", id: tiny-llama}
store: {uri: $OUT/store}
dedup: {corpus: [$CORPUS]}
run: {shard_size: 64, parallel_shards: $PARALLEL_SHARDS, bootstrap_resamples: 50}
axes:
  knowledge:
    scoring_mode: cloze
    datasets:
      - name: planted
        path: $OUT/items.jsonl
        format: mcq
        fields: {id: id, prompt: prompt, choices: ['{{"ya"}}', '{{"tidak"}}'], answer: '{{"A"}}', answer_as: letter}
      - {name: clean, path: $REPO/testdata/data/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu, limit: 4}
EOF

# found FILE: "found/planted kept=K sha=S" from a dedup report (JSON).
found() {
	jq -r --rawfile planted "$OUT/planted.tsv" '
		($planted | split("\n") | map(select(. != "") | split("\t")[0])) as $p
		| ([.drops[].item_id | ltrimstr("planted/")] | map({(.): true}) | add // {}) as $d
		| "\([$p[] | select($d[.])] | length)/\($p | length) kept=\(.kept) sha=\(.kept_sha256[0:12])"' "$1"
}
rows=()
# row NAME WALL_S CPU_S FOUND
row() {
	rows+=("$(awk -v n="$1" -v w="$2" -v c="$3" -v mb="$CMB" -v f="$4" 'BEGIN {
		printf "%-50s %8.2f %8.2f %9.0f %9.0f   %s", n, w, c, mb / w, (c > 0 ? mb / c : 0), f }')")
}
cpu_of() { # summed user+system seconds of the given pids, from /proc
	local t=0 p
	for p in "$@"; do
		t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat")))
	done
	awk -v t="$t" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }'
}

echo "machine: $(nproc) cores ($(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed "s/^ *//")), $(free -g | awk "/^Mem/ { print \$2 \" GB RAM\" }"); commit $(git -C "$REPO" describe --always --dirty)${GLOSSOBENCH:+, binary $GLOSSOBENCH}"
echo "corpus: $CORPUS, $CMB MB, $ITEMS generated items ($PLANTED planted) + 4 clean; MB = 10^6 bytes"
echo "uptime before: $(uptime)"

# --- (a) one process ------------------------------------------------------
if [ "${CAT:-1}" != 0 ]; then
	/usr/bin/time -f '%e %U %S' -o "$OUT/time" cat "$CORPUS" > /dev/null
	read -r w u s < "$OUT/time"
	row "cat CORPUS > /dev/null (read ceiling)" "$w" "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" ""
fi
declare -A sha
for n in 1 2; do
	/usr/bin/time -f '%e %U %S' -o "$OUT/time" "$BIN" dedup --items "$OUT/run.yaml" --workers "$n" --no-fingerprint --json > "$OUT/dedup-w$n.json"
	read -r w u s < "$OUT/time"
	f=$(found "$OUT/dedup-w$n.json")
	sha[one$n]=${f##*sha=}
	row "one process: dedup --workers $n (GOMAXPROCS $(nproc))" "$w" "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" "$f"
	eval "W$n=$w"
done
speedup_one=$(awk -v a="$W1" -v b="$W2" 'BEGIN { printf "%.2f", a / b }')

# --- (b) hosts --------------------------------------------------------------
hosts_note=""
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null 2>&1; then
	hosts_note="hosts: skipped (network namespaces need root and iproute2)"
else
	cleanup_net() { for h in $HOSTS; do ip link del "gbsv-${h%%:*}" 2>/dev/null || true; ip netns del "gbs-${h%%:*}" 2>/dev/null || true; done; ip link del "$BR" 2>/dev/null || true; }
	cleanup_net # a run killed half-way leaves them
	ip link add "$BR" type bridge
	ip addr add "$NET.1/24" dev "$BR"
	ip link set "$BR" up
	for h in $HOSTS; do
		n=${h%%:*}
		ip netns add "gbs-$n"
		ip link add "gbsv-$n" type veth peer name eth0 netns "gbs-$n"
		ip link set "gbsv-$n" master "$BR" up
		ip -n "gbs-$n" addr add "$NET.${h##*:}/24" dev eth0
		ip -n "gbs-$n" link set eth0 up
		ip -n "gbs-$n" link set lo up
		mkdir -p "$OUT/hosts/$n/home" "$OUT/hosts/$n/tmp"
	done
	rm -rf "$OUT/store" "$OUT/hosts/temporal/state"
	TADDR=$NET.2:7233
	# on HOST CMD...: run CMD in HOST's namespace and folder, in the
	# background, in a session of its own: with the kernel's autogroup
	# scheduling (/proc/sys/kernel/sched_autogroup_enabled) a session is one
	# scheduling group, so each host gets a CPU share of its own, as a
	# separate machine would, instead of all hosts splitting this script's.
	# setsid (not a group leader here), ip netns exec and env exec in place,
	# so $! is the program's pid.
	on() {
		local n=$1
		shift
		(cd "$OUT/hosts/$n" && exec setsid ip netns exec "gbs-$n" env -i PATH="$PATH" HOME="$OUT/hosts/$n/home" TMPDIR="$OUT/hosts/$n/tmp" "$@" > "$OUT/hosts/$n/log" 2>&1) &
		PIDS+=($!)
		sleep 0.2
		if [ "$(cat "/proc/$!/comm" 2>/dev/null)" != glossobench ]; then
			echo "host $n: pid $! is not the glossobench it started; its log:" >&2
			cat "$OUT/hosts/$n/log" >&2
			exit 1
		fi
	}
	on temporal "$BIN" dev --ip "$NET.2" --no-worker --ui-port -1 --dir "$OUT/hosts/temporal/state"
	for i in $(seq 100); do
		if timeout 1 bash -c "</dev/tcp/$NET.2/7233" 2>/dev/null; then break; fi
		[ "$i" = 100 ] && { echo "Temporal server did not answer at $TADDR; its log:" >&2; tail -20 "$OUT/hosts/temporal/log" >&2; exit 1; }
		sleep 0.3
	done
	workers=()
	for n in 1 2; do
		on "w$n" GOMAXPROCS="$HOST_CPUS" TEMPORAL_ADDRESS="$TADDR" "$BIN" worker
		workers+=("${PIDS[-1]}")
		id=scale-w$n
		rm -rf "$OUT/result-w$n"
		c0=$(cpu_of "${workers[@]}")
		t0=$(date +%s.%N)
		TEMPORAL_ADDRESS=$TADDR "$BIN" run --config "$OUT/run.yaml" --skip-preflight --run-id "$id" --out "$OUT/result-w$n" > "$OUT/run-w$n.log" 2>&1 &
		run=$!
		# The screen stage is the ScreenCorpus child: its wall from the
		# server's start and close times, the workers' CPU read when it closes.
		screen_wall="" screen_cpu=""
		while kill -0 "$run" 2>/dev/null; do
			if [ -z "$screen_wall" ] && [ -x "$TEMPORAL_CLI" ] &&
				d=$("$TEMPORAL_CLI" workflow describe --address "$TADDR" -w "evalrun-$id-screen-1" -o json 2>/dev/null) &&
				[ "$(jq -r '.workflowExecutionInfo.status' <<< "$d")" = WORKFLOW_EXECUTION_STATUS_COMPLETED ]; then
				screen_cpu=$(awk -v a="$(cpu_of "${workers[@]}")" -v b="$c0" 'BEGIN { print a - b }')
				screen_wall=$(jq -r '.workflowExecutionInfo | [.startTime, .closeTime] | map(capture("^(?<s>[^.Z]+)(?<f>\\.[0-9]+)?Z$") | (.s + "Z" | fromdateiso8601) + ((.f // "0") | tonumber)) | .[1] - .[0]' <<< "$d")
			fi
			sleep 0.5
		done
		if ! wait "$run"; then
			echo "glossobench run $id failed; its log ends:" >&2
			tail -30 "$OUT/run-w$n.log" >&2
			exit 1
		fi
		wall=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { print a - b }')
		cpu=$(awk -v a="$(cpu_of "${workers[@]}")" -v b="$c0" 'BEGIN { print a - b }')
		f=$(found "$OUT/store/runs/$id/dedup/report.json")
		sha[hosts$n]=${f##*sha=}
		kept=$(jq -r '.summary.dedup | "\(.axes | map(.kept) | add) kept, sha256 \(.kept_sha256[0:12])"' "$OUT/result-w$n/result.json")
		if [ -n "$screen_wall" ]; then
			# Which worker screened each shard: the identity (PID@host@) of
			# every ScreenShard attempt's start in the child's history.
			split=$("$TEMPORAL_CLI" workflow show --address "$TADDR" -w "evalrun-$id-screen-1" -o json |
				jq -r '[.events[] | .activityTaskStartedEventAttributes.identity // empty | split("@")[0]] | group_by(.) | map("pid \(.[0]): \(length)") | join(", ")')
			for i in "${!workers[@]}"; do split=${split//"pid ${workers[$i]}:"/"w$((i + 1)):"}; done
			row "hosts: $n worker(s), screen stage (ScreenCorpus)" "$screen_wall" "$screen_cpu" "$f; shards $split"
			eval "S$n=$screen_wall"
		fi
		row "hosts: $n worker(s), whole run" "$wall" "$cpu" "result.json: $kept"
		eval "R$n=$wall"
	done
	if [ -n "${S1:-}" ] && [ -n "${S2:-}" ]; then
		hosts_note="hosts, 2 workers against 1: screen stage $(awk -v a="$S1" -v b="$S2" 'BEGIN { printf "%.2f", a / b }')x, whole run $(awk -v a="$R1" -v b="$R2" 'BEGIN { printf "%.2f", a / b }')x"
	else
		hosts_note="hosts, 2 workers against 1: whole run $(awk -v a="$R1" -v b="$R2" 'BEGIN { printf "%.2f", a / b }')x (no Temporal CLI at $TEMPORAL_CLI: no screen-stage rows)"
	fi
fi

echo
echo "one process: GOMAXPROCS $(nproc); hosts: each worker GOMAXPROCS $HOST_CPUS, run.parallel_shards $PARALLEL_SHARDS, each host a session of its own (autogroup scheduling: $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo n/a))"
printf '%-50s %8s %8s %9s %9s   %s\n' "" "wall s" "CPU s" "wall MB/s" "CPU MB/s" "planted found/planted, kept, kept-id SHA-256"
printf '%s\n' "${rows[@]}"
echo
echo "one process, 2 workers against 1: ${speedup_one}x wall"
echo "$hosts_note"
same=yes
for k in "${!sha[@]}"; do [ "${sha[$k]}" = "${sha[one1]}" ] || same=no; done
echo "kept-id SHA-256 equal across every screen: $same"
echo "uptime after: $(uptime)"
[ "$same" = yes ]
