#!/bin/sh
# php/worker's extension tests under valgrind memcheck: PHPUnit itself (the in-process
# HttpWorker and the merge) and every worker process it starts (the extension serving
# headers, sessions, uploads and a front controller with exit, its worker loop and its
# Fiber-mode hot path against the PHP one, and the output capture at the SAPI's write).
# Any invalid access or use
# of uninitialised memory fails the run. Leaks are left to asan.sh's phpt run: at exit
# PHP does not free what PHPUnit's object graph holds, which valgrind calls lost.
#
#   ext/ferry/memcheck_sdk.sh [path/to/ferry.so]     default: the build.sh build
#
# USE_ZEND_ALLOC=0 turns every emalloc() into a malloc() valgrind can see (as run-tests -m
# does); ZEND_DONT_UNLOAD_MODULES keeps the extension mapped at exit so reports keep
# their symbols. PCRE's JIT is off (pcre.jit=0, through an ini scan directory every
# worker inherits): valgrind cannot follow JIT-compiled code and flags its reads.
# About a minute on 2 cores.
set -eu

SRC=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$SRC/../.." && pwd)
SO=${1:-$SRC/.build/modules/ferry.so}
command -v valgrind >/dev/null 2>&1 || { echo "memcheck_sdk.sh: valgrind not found (Debian: apt-get install valgrind)" >&2; exit 2; }
[ -f "$SO" ] || { echo "memcheck_sdk.sh: $SO not found: run ext/ferry/build.sh" >&2; exit 2; }
LOG=$(mktemp -d)
trap 'rm -rf "$LOG"' EXIT
echo "pcre.jit=0" >"$LOG/nojit.ini"

status=0
USE_ZEND_ALLOC=0 ZEND_DONT_UNLOAD_MODULES=1 FERRY_TEST_EXT=1 FERRY_TEST_TIMEOUT=120 PHP_INI_SCAN_DIR=":$LOG" \
	valgrind -q --trace-children=yes --error-exitcode=99 --leak-check=no \
	--log-file="$LOG/valgrind.%p" \
	php -d extension="$SO" "$(command -v phpunit)" --colors=never -c "$ROOT/php/worker/phpunit.xml.dist" \
	--filter 'Ext(Merge|WorkerProcess)Test|NativeLoopTest|NativeFibersTest|testCloseLoopEndsWithTheExtension' || status=$?
# A worker's own report does not change PHPUnit's exit status: read every log.
# With -q a log holds nothing but reports.
if [ -n "$(cat "$LOG"/valgrind.* 2>/dev/null)" ]; then
	cat "$LOG"/valgrind.* >&2
	echo "memcheck_sdk.sh: valgrind reported errors (above)" >&2
	status=1
fi
[ $status -eq 0 ] && echo "memcheck_sdk.sh: no valgrind errors in PHPUnit and its worker processes"
exit $status
