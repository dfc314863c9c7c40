#!/bin/sh
# Builds ext/ferry out of tree and optionally runs its phpt suite.
#
#   ext/ferry/build.sh          build; prints the path of ferry.so
#   ext/ferry/build.sh test     build, then run tests/*.phpt (fails on any failed test)
#
# The build happens in $FERRY_EXT_BUILD_DIR (default ext/ferry/.build): phpize writes a
# configure script, Makefiles and m4 files next to the sources it is given, so the
# sources are copied there first and this directory stays clean. Rebuilds are
# incremental: phpize and configure run again only when config.m4 changes.
# Environment: PHPIZE, PHP_CONFIG (defaults phpize, php-config), CFLAGS, LDFLAGS,
# TESTS (phpt files or directory), TEST_PHP_ARGS (more run-tests.php options).
set -eu

SRC=$(cd "$(dirname "$0")" && pwd)
BUILD=${FERRY_EXT_BUILD_DIR:-$SRC/.build}
PHPIZE=${PHPIZE:-phpize}
PHP_CONFIG=${PHP_CONFIG:-php-config}
JOBS=${JOBS:-2}

for tool in "$PHPIZE" "$PHP_CONFIG" make; do
	command -v "$tool" >/dev/null 2>&1 || { echo "build.sh: $tool not found (Debian: apt-get install php8.2-dev make)" >&2; exit 2; }
done

mkdir -p "$BUILD"
# -u keeps the copies' times when nothing changed, so make rebuilds only what did.
cp -p -u "$SRC"/config.m4 "$SRC"/*.c "$SRC"/*.h "$BUILD"/
rm -rf "$BUILD/tests"
cp -R "$SRC/tests" "$BUILD/tests"
# The parity tests compare with php/worker's pure-PHP codec, found from the sources.
printf '<?php return %s;\n' "'$(cd "$SRC/../.." && pwd)/php/worker/autoload.php'" >"$BUILD/tests/sdk.inc"

if [ ! -f "$BUILD/Makefile" ] || [ "$BUILD/config.m4" -nt "$BUILD/Makefile" ]; then
	(
		cd "$BUILD"
		"$PHPIZE" --clean >/dev/null 2>&1 || true
		"$PHPIZE" >/dev/null 2>&1
		./configure --enable-ferry --with-php-config="$(command -v "$PHP_CONFIG")" >configure.log 2>&1 \
			|| { cat configure.log >&2; exit 1; }
	)
fi
# The build copies the new ferry.so over the old one in place, and PHP processes that
# mapped the old one (a running server's workers) would then run the new bytes and crash:
# give them the old file to keep, under a name of its own, before anything is written.
if [ -f "$BUILD/modules/ferry.so" ]; then
	cp -p "$BUILD/modules/ferry.so" "$BUILD/modules/.ferry.so.next"
	mv -f "$BUILD/modules/.ferry.so.next" "$BUILD/modules/ferry.so"
fi
make -C "$BUILD" -j"$JOBS" -s >/dev/null
echo "$BUILD/modules/ferry.so"

if [ "${1:-}" = test ]; then
	# -q: no prompts; REPORT_EXIT_STATUS: a failed test fails the script.
	# FERRY_TEST_PHP: another php to run the tests with (asan.sh's sanitizer wrapper).
	status=0
	make -C "$BUILD" -s test NO_INTERACTION=1 REPORT_EXIT_STATUS=1 TESTS="${TESTS:-tests}" \
		TEST_PHP_ARGS="${TEST_PHP_ARGS:-} -q --show-diff" \
		${FERRY_TEST_PHP:+PHP_EXECUTABLE="$FERRY_TEST_PHP"} >"$BUILD/test.log" 2>&1 || status=$?
	cat "$BUILD/test.log"
	# A test skipped because the extension did not load must not pass as success.
	if grep -q "^Tests skipped *: *[1-9]" "$BUILD/test.log"; then
		echo "build.sh: tests were skipped (see the reasons above)" >&2
		status=1
	fi
	exit $status
fi
