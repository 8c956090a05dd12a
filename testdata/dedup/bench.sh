#!/bin/sh
# Dedup throughput beside GNU grep -F, ripgrep -F and cat on the same
# synthetic corpus, with how many planted items each finds.
# Writes a few hundred MB under /tmp, never into the repository.
#   testdata/dedup/bench.sh [OUTDIR] [CORPUS_MB] [ITEMS]
# ITEMS defaults to 444, the quick start's item count (the needle count of
# the ripgrep comparison in issue 32).
set -eu
cd "$(dirname "$0")/../.."
OUT=${1:-/tmp/glossobench-dedup-bench}
MB=${2:-400}
ITEMS=${3:-444}
if [ ! -f "$OUT/corpus.txt" ] || [ ! -f "$OUT/planted.tsv" ] || [ "$(wc -l < "$OUT/items.jsonl")" != "$ITEMS" ]; then
	go run ./testdata/dedup/gen -out "$OUT" -mb "$MB" -items "$ITEMS"
fi
if ! command -v rg >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		apt-get install -y ripgrep >/dev/null 2>&1 || true
	fi
	command -v rg >/dev/null 2>&1 || echo "ripgrep (rg) is not installed and could not be (apt-get install ripgrep as root): its row is skipped"
fi
# GLOSSOBENCH=/path/to/glossobench reuses a built binary.
BIN=${GLOSSOBENCH:-$OUT/glossobench}
if [ -z "${GLOSSOBENCH:-}" ]; then
	go build -o "$BIN" ./cmd/glossobench
fi
echo "uptime: $(uptime)"
"$BIN" dedup --bench --workers 2 --no-fingerprint --items "$OUT/items.jsonl" --planted "$OUT/planted.tsv" --corpus "$OUT/corpus.txt"
echo "uptime: $(uptime)"
