#!/bin/sh
# Reference for dedup.KeptSHA256: ids sorted bytewise (C locale), duplicates
# removed, joined by "\n", no trailing newline, SHA-256 in lower-case hex.
# Writes kept_sha256_golden.txt (one line per case: name sha256).
set -eu
cd "$(dirname "$0")"
{
	printf 'ids %s\n' "$(printf '%s' "$(LC_ALL=C sort -u kept_ids.txt)" | sha256sum | cut -d' ' -f1)"
	printf 'empty %s\n' "$(printf '' | sha256sum | cut -d' ' -f1)"
	printf 'one %s\n' "$(printf 'synth/2' | sha256sum | cut -d' ' -f1)"
} > kept_sha256_golden.txt
# Cross-check with Python's hashlib.
/usr/bin/python3 - <<'PY'
import hashlib
ids = sorted(set(open("kept_ids.txt", encoding="utf-8").read().split("\n")) - {""}, key=lambda s: s.encode())
want = hashlib.sha256("\n".join(ids).encode()).hexdigest()
got = open("kept_sha256_golden.txt").read().split("\n")[0].split()[1]
assert got == want, (got, want)
print("ok", want)
PY
