#!/bin/sh
# Runs the phpt suite under memory and undefined-behaviour checkers; any report fails.
#
#   ext/ferry/asan.sh            valgrind memcheck, then UBSan (both below)
#   ext/ferry/asan.sh valgrind   the normal build, every test under valgrind (run-tests -m):
#                                invalid reads/writes, uninitialised values and leaks
#   ext/ferry/asan.sh ubsan      a -fsanitize=undefined build, runtime preloaded into php
#
# Why not ASan here: Debian's php dlopen()s extensions with RTLD_DEEPBIND, which ASan's
# runtime refuses, and php itself is not instrumented. ASan runs on the frame decoder in
# fuzz.sh instead, where the code is linked without PHP.
# Zend's allocator carves emalloc() out of its own chunks, which would hide overflows and
# leaks from valgrind: run-tests -m sets USE_ZEND_ALLOC=0 so each one is a malloc().
set -eu

SRC=$(cd "$(dirname "$0")" && pwd)
MODE=${1:-all}

run_valgrind() {
	command -v valgrind >/dev/null 2>&1 || { echo "asan.sh: valgrind not found (Debian: apt-get install valgrind)" >&2; exit 2; }
	# A test with valgrind errors or leaks is reported as LEAK, which fails the run.
	TEST_PHP_ARGS="-m" "$SRC/build.sh" test
}

run_ubsan() {
	LIBUBSAN=$(gcc -print-file-name=libubsan.so)
	[ -f "$LIBUBSAN" ] || { echo "asan.sh: libubsan not found (Debian: apt-get install gcc)" >&2; exit 2; }
	SAN="-fsanitize=undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
	(
		export FERRY_EXT_BUILD_DIR=${FERRY_EXT_UBSAN_DIR:-$SRC/.build-ubsan}
		export CFLAGS="-g -O1 $SAN" LDFLAGS="$SAN"
		"$SRC/build.sh" >/dev/null
		export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
		# Only php gets the runtime preloaded.
		WRAPPER="$FERRY_EXT_BUILD_DIR/php-ubsan"
		printf '#!/bin/sh\nLD_PRELOAD=%s exec %s "$@"\n' "$LIBUBSAN" "$(command -v php)" >"$WRAPPER"
		chmod +x "$WRAPPER"
		FERRY_TEST_PHP="$WRAPPER" "$SRC/build.sh" test
	)
}

case "$MODE" in
	valgrind) run_valgrind ;;
	ubsan) run_ubsan ;;
	all) run_valgrind; run_ubsan ;;
	*) echo "usage: $0 [valgrind|ubsan|all]" >&2; exit 2 ;;
esac
