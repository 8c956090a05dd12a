#!/usr/bin/env bash
# Starts and stops versitygw, a real S3-compatible server, for the S3 tests.
#
#   eval "$(.ci/versitygw.sh start DIR)"   # install if needed, start, create the bucket, export the test env
#   .ci/versitygw.sh stop DIR              # stop the server started with DIR, by its PID file
#
# The server listens on 127.0.0.1:$VERSITYGW_PORT (default 7070) and keeps its
# objects under DIR/data; its log is DIR/versitygw.log. The binary is built
# once with `go install` and cached in $HOME/.cache/glossobench/bin. Only the
# export lines go to stdout, so the output can be eval'ed.
set -euo pipefail

VERSION=v1.8.0
BIN_DIR=${GLOSSOBENCH_BIN:-$HOME/.cache/glossobench/bin}
BIN=$BIN_DIR/versitygw
PORT=${VERSITYGW_PORT:-7070}
BUCKET=${GLOSSOBENCH_S3_BUCKET:-glossobench-test}
# Throwaway credentials for a server bound to loopback, used only by tests.
ACCESS_KEY=glossobench-test
SECRET_KEY=glossobench-test-secret

log() { echo "versitygw.sh: $*" >&2; }

usage() {
	echo "usage: $0 start|stop DIR" >&2
	exit 2
}

install() {
	if [[ -x $BIN && "$(cat "$BIN.version" 2>/dev/null)" == "$VERSION" ]]; then
		return
	fi
	log "installing versitygw $VERSION into $BIN_DIR (a few minutes on 2 cores)"
	mkdir -p "$BIN_DIR"
	# Outside any module, so the repository's go.mod plays no part.
	(cd "$(mktemp -d)" && GOBIN=$BIN_DIR GOFLAGS=-mod=mod go install "github.com/versity/versitygw/cmd/versitygw@$VERSION")
	echo "$VERSION" >"$BIN.version"
}

# running PIDFILE: succeeds when the PID file names a live versitygw.
running() {
	local pid
	pid=$(cat "$1" 2>/dev/null) || return 1
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && [[ "$(cat "/proc/$pid/comm" 2>/dev/null || ps -o comm= -p "$pid")" == versitygw* ]]
}

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

start() {
	local dir=$1 pidfile=$1/versitygw.pid
	install
	mkdir -p "$dir/data"
	if running "$pidfile"; then
		log "already running (pid $(cat "$pidfile"))"
	else
		if answers; then
			log "port $PORT is taken by another process; set VERSITYGW_PORT"
			exit 1
		fi
		ROOT_ACCESS_KEY=$ACCESS_KEY ROOT_SECRET_KEY=$SECRET_KEY \
			nohup "$BIN" --port "127.0.0.1:$PORT" --quiet posix "$dir/data" >"$dir/versitygw.log" 2>&1 &
		echo $! >"$pidfile"
		for _ in $(seq 1 150); do
			answers && break
			if ! running "$pidfile"; then
				log "exited at start; log follows"
				cat "$dir/versitygw.log" >&2
				exit 1
			fi
			sleep 0.2
		done
		answers || { log "not answering on 127.0.0.1:$PORT after 30s"; exit 1; }
		log "started (pid $(cat "$pidfile")) on 127.0.0.1:$PORT"
	fi
	local root
	root=$(cd "$(dirname "$0")/.." && pwd)
	(cd "$root" && AWS_ACCESS_KEY_ID=$ACCESS_KEY AWS_SECRET_ACCESS_KEY=$SECRET_KEY AWS_REGION=us-east-1 \
		go run ./infra/store/internal/mkbucket "s3://$BUCKET?endpoint=http://127.0.0.1:$PORT&path_style=true&region=us-east-1")
	cat <<-EXPORTS
		export GLOSSOBENCH_S3_ENDPOINT=http://127.0.0.1:$PORT
		export GLOSSOBENCH_S3_BUCKET=$BUCKET
		export AWS_ACCESS_KEY_ID=$ACCESS_KEY
		export AWS_SECRET_ACCESS_KEY=$SECRET_KEY
		export AWS_REGION=us-east-1
	EXPORTS
}

stop() {
	local pidfile=$1/versitygw.pid pid
	if ! running "$pidfile"; then
		log "not running"
		rm -f "$pidfile"
		return
	fi
	pid=$(cat "$pidfile")
	kill "$pid"
	for _ in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "pid $pid ignored SIGTERM; sending SIGKILL"
		kill -9 "$pid"
	fi
	rm -f "$pidfile"
	log "stopped (pid $pid)"
}

[[ $# -eq 2 ]] || usage
case $1 in
start) start "$2" ;;
stop) stop "$2" ;;
*) usage ;;
esac
