#!/bin/sh
# Screenshots of the viewer's pages, for docs/VIEWER.md: PNGs from headless
# Chromium of a running `glossobench view`.
#   docs/viewer/shoot.sh http://127.0.0.1:7788 RUN_ID [OUT_DIR]
set -eu
base=${1:?usage: shoot.sh BASE_URL RUN_ID [OUT_DIR]}
run=${2:?usage: shoot.sh BASE_URL RUN_ID [OUT_DIR]}
out=${3:-$(dirname "$0")}
shot() { # name path [height]
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
		--user-data-dir="$(mktemp -d)" --window-size=1280,"${3:-900}" \
		--screenshot="$out/$1.png" "$base$2" 2>/dev/null
}
shot runs /
shot run "/run/$run/"
shot axis-knowledge "/run/$run/axis/knowledge/" 1400
shot axis-mt "/run/$run/axis/mt/" 1600
shot axis-safety "/run/$run/axis/safety/" 1400
shot errors "/run/$run/axis/knowledge/errors"
shot leaderboard /leaderboard
shot live /live
