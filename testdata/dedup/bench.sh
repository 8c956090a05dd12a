#!/bin/sh
# Dedup throughput beside grep -F and cat on the same synthetic corpus.
# Writes a few hundred MB under /tmp, never into the repository.
#   testdata/dedup/bench.sh [OUTDIR] [CORPUS_MB]
set -eu
cd "$(dirname "$0")/../.."
OUT=${1:-/tmp/glossobench-dedup-bench}
MB=${2:-400}
if [ ! -f "$OUT/corpus.txt" ]; then
	go run ./testdata/dedup/gen -out "$OUT" -mb "$MB" -items 50000
fi
# GLOSSOBENCH=/path/to/glossobench reuses a built binary.
BIN=${GLOSSOBENCH:-$OUT/glossobench}
if [ -z "${GLOSSOBENCH:-}" ]; then
	go build -o "$BIN" ./cmd/glossobench
fi
"$BIN" dedup --bench --items "$OUT/items.jsonl" --corpus "$OUT/corpus.txt"
