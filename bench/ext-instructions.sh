#!/bin/sh
# Instructions per hello request in the PHP worker loop (php/worker/bench/ext-hotpath.php,
# frames in, HttpWorker, answer frames out, no syscalls), with and without ext/ferry,
# counted by callgrind: unlike times, the counts do not move when the machine is shared.
#
#   bench/ext-instructions.sh [requests]        default 4000
#
# Needs valgrind and a built extension (ext/ferry/build.sh).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-4000}
SO=${FERRY_EXT_SO:-$ROOT/ext/ferry/.build/modules/ferry.so}
[ -f "$SO" ] || { echo "ext-instructions.sh: $SO missing, run ext/ferry/build.sh" >&2; exit 2; }
count() { # php args... -> instructions of the whole run
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' | tr -d ,
}
for mode in without with; do
	args=""
	[ $mode = with ] && args="-d extension=$SO"
	base=$(count php $args "$ROOT/php/worker/bench/ext-hotpath.php" 8 loop)
	full=$(count php $args "$ROOT/php/worker/bench/ext-hotpath.php" "$N" loop)
	echo "$mode ext/ferry: $(( (full - base) / (N - 8) )) instructions per request"
done
