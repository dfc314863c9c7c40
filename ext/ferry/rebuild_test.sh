#!/usr/bin/env bash
# A rebuild must not write over the ferry.so that running PHP processes (a server's
# workers) have mapped: they would run the new bytes and crash. A php process that loaded
# the extension waits while one source is recompiled; then the file it mapped must be gone
# from the path (replaced, not rewritten) and the process must still call into it.
#
#   ext/ferry/rebuild_test.sh        (after ext/ferry/build.sh; a few seconds)
set -euo pipefail
SRC=$(cd "$(dirname "$0")" && pwd)
BUILD=${FERRY_EXT_BUILD_DIR:-$SRC/.build}
SO=$BUILD/modules/ferry.so
[ -f "$SO" ] || { echo "rebuild_test.sh: $SO missing: run ext/ferry/build.sh" >&2; exit 2; }

coproc PHP { exec php -n -d extension="$SO" -r 'echo "loaded\n"; fgets(STDIN); echo Ferry\Ext\in_request() ? "in request\n" : "alive\n";'; }
# bash forgets PHP[] when the process ends: keep its pipes and pid.
out=${PHP[0]} in=${PHP[1]} pid=$PHP_PID
read -r -u "$out" line
[ "$line" = loaded ] || { echo "rebuild_test.sh: php did not load $SO: $line" >&2; exit 1; }
mapped=$(awk -v so="$SO" '$6 == so { print $5; exit }' "/proc/$pid/maps")
[ -n "$mapped" ] || { echo "rebuild_test.sh: $SO is not in php's memory map" >&2; exit 1; }

touch "$BUILD/ferry_loop.c" # newer than its object: recompiled and linked again
"$SRC/build.sh" >/dev/null

echo go >&"$in" 2>/dev/null || true
read -r -u "$out" line 2>/dev/null || line="no answer: it died"
wait "$pid" 2>/dev/null || true
now=$(stat -c %i "$SO")
if [ "$now" = "$mapped" ]; then
	echo "rebuild_test.sh: the rebuild wrote over the ferry.so a running process had mapped (inode $mapped)" >&2
	exit 1
fi
[ "$line" = alive ] || { echo "rebuild_test.sh: the running process after the rebuild: $line" >&2; exit 1; }
echo "rebuild_test.sh: a rebuild leaves running processes their ferry.so"
