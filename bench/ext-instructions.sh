#!/bin/sh
# Instructions per hello request in the PHP worker loop, with and without ext/ferry,
# counted by callgrind: unlike times, the counts do not move when the machine is shared.
# php/worker/bench/ext-hotpath.php's `fileloop`: HttpWorker::run() over a real relay (a
# file of pipelined jobs in, /dev/null out), so with the extension its own loop
# (Ferry\Ext\http_serve()) serves them; "with ext/ferry, PHP loop" is FERRY_EXT_LOOP=0.
# Syscalls are not counted. The first read's jobs go through the PHP loop either way, so
# the figure is the difference between two runs divided by the difference in requests.
#
#   bench/ext-instructions.sh [requests]        default 4000
#
# Needs valgrind and a built extension (ext/ferry/build.sh).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-4000}
BASE=1000
SO=${FERRY_EXT_SO:-$ROOT/ext/ferry/.build/modules/ferry.so}
[ -f "$SO" ] || { echo "ext-instructions.sh: $SO missing, run ext/ferry/build.sh" >&2; exit 2; }
count() { # php args... -> instructions of the whole run
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' | tr -d ,
}
per_request() { # label, extension (or ""), FERRY_EXT_LOOP, [fiberfileloop for Fiber mode]
	args=""
	[ -n "$2" ] && args="-d extension=$2"
	mode=${4:-fileloop}
	base=$(FERRY_EXT_LOOP=$3 count php $args "$ROOT/php/worker/bench/ext-hotpath.php" $BASE $mode)
	full=$(FERRY_EXT_LOOP=$3 count php $args "$ROOT/php/worker/bench/ext-hotpath.php" $((BASE + N)) $mode)
	echo "$1: $(( (full - base) / N )) instructions per request"
}
per_request "without ext/ferry" "" 1
per_request "with ext/ferry, PHP loop" "$SO" 0
per_request "with ext/ferry, its own loop" "$SO" 1
per_request "Fiber mode, without ext/ferry" "" 1 fiberfileloop
per_request "Fiber mode, with ext/ferry, PHP runner" "$SO" 0 fiberfileloop
per_request "Fiber mode, with ext/ferry, its Fibers" "$SO" 1 fiberfileloop
