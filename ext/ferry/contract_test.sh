#!/bin/sh
# A php/worker and an ext/ferry of different worker contract versions (README.md, "Worker
# contract"): the extension is built once more as another release would build it (its
# FERRY_CONTRACT_VERSION set to 0), and php/worker's ContractMismatchTest runs a worker
# with it: PHP serves every request and the log names both versions.
#
#   ext/ferry/contract_test.sh      (a build of its own in ext/ferry/.build-contract)
set -eu
SRC=$(cd "$(dirname "$0")" && pwd)
BUILD=$SRC/.build-contract
FERRY_EXT_BUILD_DIR=$BUILD CFLAGS="${CFLAGS:-} -DFERRY_CONTRACT_VERSION=0" "$SRC/build.sh" >/dev/null
FERRY_EXT_SO=$BUILD/modules/ferry.so FERRY_TEST_OTHER_CONTRACT=1 FERRY_PHP_EXTENSION=off \
	phpunit --colors=never -c "$SRC/../../php/worker/phpunit.xml.dist" --filter ContractMismatchTest
