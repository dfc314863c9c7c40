# Two commands: `make run` (install what is missing, build, start the demo) and
# `make test` (every Go and PHP test). See README.md.
GO       ?= go
BIN      := bin/ferry
VERSION  := $(shell git describe --always --dirty 2>/dev/null || echo dev)
PHPUNIT  := phpunit --colors=never
PHP_PKGS := worker msgpack tarantool httpfoundation symfony laravel
# ext/ferry, the optional C extension (ext/ferry/README.md), built with phpize.
EXT_SO   := $(CURDIR)/ext/ferry/.build/modules/ferry.so

.PHONY: all deps build build-ext run test test-go test-direct test-php test-ext test-packages test-bench test-matrix fuzz memcheck bench clean

all: build

deps:
	@scripts/deps.sh

build: build-ext
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/ferry

# Only when phpize is there: the server and pure-PHP workers do not need the extension.
build-ext:
	@if command -v phpize >/dev/null 2>&1; then \
	  ext/ferry/build.sh >/dev/null; \
	else echo "phpize not found: ext/ferry not built, workers run pure PHP (Debian: php8.2-dev)"; fi

run: deps build
	scripts/run.sh

test: deps build test-packages test-ext test-go test-direct test-php test-bench fuzz
	@echo "make test: all suites passed"

test-go:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

# The e2e tests of HTTP/1.1 behaviour that both server modes share, again with
# server.mode: direct (the workers serve HTTP themselves, docs/direct.md): one list, one
# set of tests, two modes. What front mode alone does (h2c, static files, RoadRunner
# workers, pure-PHP workers) is not in it, and subtests of it skip (frontOnly).
DIRECT_E2E = TestHTTPRequestsReachPHP TestHTTPErrors TestPSR7App TestPSR7AppExecTTL TestReloadDuringRequestsLosesNone \
  TestWorkersRunWithOpcacheAndPreload TestFileAnswers TestSpooledOutput TestSIGTERMDrainsQueuedRequests \
  TestSIGTERMWithIdleKeepAliveClient TestSIGHUPReloadsThroughTheBinary TestReadHeaderAndIdleTimeouts \
  TestIdleTimeoutZeroUsesReadTimeout TestSilentConnectionTimesOutAtReadHeaderTimeout TestMaxMemoryBoundsOneRequest TestMalformedRequestsNeverReachPHP \
  TestStdoutWritesFailNoRequest TestExecTTLTimesEachJob TestInputsParsedAsPHPDoes TestOutputBufferLoopEndsAsUnderFPM \
  TestWorkersGetAWebMemoryLimit TestSuperglobalsDoNotCarryOver TestFatalErrorAnswers500 TestFatalErrorCutsAStreamedAnswer \
  TestStreamedAnswers TestLargeStreamedBody TestSSEExample TestShutdownEndsStreams TestStreamedAnswerHTTP10 \
  TestPsr7StreamedBody TestEarlyHints TestMalformedTargetsAndHostsNeverReachPHP TestDescriptorExhaustionNeverStopsTheServer \
  TestTrustedProxies TestUnderscoresInHeadersKept TestLeakWatchNamesTheRequest TestLeakWatchReplayAnswersNoClient \
  TestEarlyHintsPipelined TestReloadEndsStreams TestTTLEndsStreams TestFlaggingABigAnswerDoesNotCopyIt \
  TestSpoolLeftByADeadWorker TestMaxMemoryRetiresAWorkerThatKeepsMemory TestTerminateHookPastExecTTLKillsTheWorker \
  TestFatalErrorAnswersEveryFiber500 TestFiberModeRunsOnTheExtension \
  TestRequestIDs TestAccessLogReopensOnSIGUSR1 \
  TestFiberIOStreamsSuspendOnlyTheirFiber TestFiberIOUsleepSuspendsOnlyItsFiber TestFiberIOHTTPConcurrent TestFiberIOHTTPErrors \
  TestFiberIOPDOMySQL TestFiberIOMySQLErrors TestFiberIOMySQLSharedHandle TestFiberIOMySQLKilledMidQuery \
  TestFiberIORedisConcurrent TestFiberIORedisErrors TestFiberIORedisKilledMidCommand TestFiberIORedisSharedHandle \
  TestFiberIOTarantoolConcurrent TestFiberIOTarantoolErrors TestFiberIOTarantoolKilledMidCall TestFiberIOTarantoolSharedHandle \
  TestFiberIOWriteTimeoutHonoured TestFiberIOConnectTimeout TestFiberIOMySQLConnectTimeout \
  TestFiberIOTLSSuspendsOnlyItsFiber TestFiberIOPDOMySQLOverTLS TestFiberIOSharedPDOServesOneRequestAtATime \
  TestFiberClientGoneCancelsTheWaitingJob
empty :=
space := $(empty) $(empty)

test-direct: build-ext
	FERRY_E2E_MODE=direct $(GO) test -count=1 -run '^($(subst $(space),|,$(strip $(DIRECT_E2E))))$$' ./cmd/ferry/

# Each suite twice. First pure PHP, the reference: FERRY_PHP_EXTENSION=off keeps the
# extension out of the workers a test's `ferry serve` starts too. Then with ext/ferry
# loaded in PHPUnit (in-process workers take the extension's path) and, through
# FERRY_PHP_EXTENSION, in ferry's workers; worker processes a test starts with
# php directly stay pure PHP, as their assertions expect (FERRY_TEST_EXT=1 makes
# php/worker check that the extension really is loaded).
test-php: build-ext
	@set -e; [ -f $(EXT_SO) ] || { echo "test-php: $(EXT_SO) missing: run make build-ext (needs php8.2-dev)"; exit 1; }; \
	for p in $(PHP_PKGS); do \
	  if [ -f php/$$p/phpunit.xml.dist ]; then \
	    echo "== php/$$p (pure PHP)"; FERRY_PHP_EXTENSION=off $(PHPUNIT) -c php/$$p/phpunit.xml.dist; \
	    echo "== php/$$p (ext/ferry)"; FERRY_TEST_EXT=1 FERRY_PHP_EXTENSION=$(EXT_SO) php -d extension=$(EXT_SO) $$(command -v phpunit) --colors=never -c php/$$p/phpunit.xml.dist; \
	  fi; \
	done

# The extension's phpt suite, a rebuild under a running process, and a short libFuzzer
# pass over its decoders.
test-ext:
	ext/ferry/build.sh test
	ext/ferry/rebuild_test.sh
	ext/ferry/contract_test.sh
	ext/ferry/fuzz.sh 5

# The PHP 8.4 set, beside make test's 8.2 one: Debian trixie's PHP 8.4, Symfony 6.4 and
# Laravel 10 in a root that scripts/trixie-root.sh makes once under .cache (2 to 5
# minutes, 660 MB; again only when its package list changes). Everything PHP runs in it
# through scripts/trixie-run, ferry's workers too (bin/ferry, built on the host, runs in
# the root as PHPUnit starts it). ext/ferry must compile without a warning on both PHPs.
# Not part of `make test`: .ci/run runs it after make test.
TRIXIE      := scripts/trixie-run
EXT84_BUILD := $(CURDIR)/ext/ferry/.build-php84
EXT84_SO    := $(EXT84_BUILD)/modules/ferry.so
MATRIX_PKGS := worker msgpack httpfoundation symfony laravel
WERROR      := -g -O2 -Werror
TRIXIE_TT   := FERRY_TRIXIE_HOST=1 $(TRIXIE) env PATH=$(CURDIR)/scripts/trixie-host:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

test-matrix: build
	scripts/trixie-root.sh >/dev/null
	FERRY_EXT_BUILD_DIR=$(CURDIR)/ext/ferry/.build-werror CFLAGS="$(WERROR)" ext/ferry/build.sh >/dev/null
	$(TRIXIE) scripts/composer_test.sh
	$(TRIXIE) env PHPIZE=phpize8.4 PHP_CONFIG=php-config8.4 FERRY_EXT_BUILD_DIR=$(EXT84_BUILD) CFLAGS="$(WERROR)" ext/ferry/build.sh test
	@# The decoders include no PHP header: what differs here is trixie's gcc 14 (ASan, UBSan).
	$(TRIXIE) env FERRY_FUZZ_DIR=$(CURDIR)/ext/ferry/.fuzz-php84 ext/ferry/fuzz.sh 5
	scripts/php84_serve_test.sh $(EXT84_SO)
	@set -e; for p in $(MATRIX_PKGS); do \
	  echo "== php/$$p on PHP 8.4 (pure PHP)"; \
	  $(TRIXIE) env FERRY_PHP_EXTENSION=off FERRY_EXT_SO=$(EXT84_SO) $(PHPUNIT) -c php/$$p/phpunit.xml.dist; \
	  echo "== php/$$p on PHP 8.4 (ext/ferry)"; \
	  $(TRIXIE) env FERRY_TEST_EXT=1 FERRY_EXT_SO=$(EXT84_SO) FERRY_PHP_EXTENSION=$(EXT84_SO) \
	    php8.4 -d extension=$(EXT84_SO) /usr/bin/phpunit --colors=never -c php/$$p/phpunit.xml.dist; \
	done
	@# Debian 13 has no tarantool package: php/tarantool's tests start the host's, through
	@# scripts/trixie-host/tarantool and the host root that FERRY_TRIXIE_HOST=1 mounts.
	@echo "== php/tarantool on PHP 8.4 (pure PHP, the host's tarantool)"
	$(TRIXIE_TT) FERRY_PHP_EXTENSION=off $(PHPUNIT) -c php/tarantool/phpunit.xml.dist
	@echo "== php/tarantool on PHP 8.4 (ext/ferry, the host's tarantool)"
	$(TRIXIE_TT) FERRY_TEST_EXT=1 FERRY_EXT_SO=$(EXT84_SO) FERRY_PHP_EXTENSION=$(EXT84_SO) \
	  php8.4 -d extension=$(EXT84_SO) /usr/bin/phpunit --colors=never -c php/tarantool/phpunit.xml.dist
	@echo "make test-matrix: the PHP 8.4 set passed"

# For CI: the phpt suite under valgrind and UBSan (ext/ferry/asan.sh), then the SDK's
# extension tests under valgrind. Several minutes; not part of `make test`.
memcheck: build-ext
	ext/ferry/asan.sh
	ext/ferry/memcheck_sdk.sh $(EXT_SO)

# Static checks of the PHP code (php -l and scripts/phpcheck.php), then `composer validate
# --strict` and an offline `composer install` of each package as its README says.
test-packages:
	scripts/phpcheck.sh
	scripts/composer_test.sh

# The harness's own tests and a one-second smoke run of the hello scenario.
test-bench:
	bash bench/test_smoke.sh

# A short coverage-guided run of each Go decoder (see scripts/fuzz.sh).
fuzz:
	GO=$(GO) scripts/fuzz.sh

bench: deps build
	python3 bench/run.py $(if $(SCENARIO),--scenario $(SCENARIO)) $(BENCH_ARGS)

clean:
	rm -rf bin bench/results ext/ferry/.build ext/ferry/.build-ubsan ext/ferry/.fuzz ext/ferry/.build-php84 ext/ferry/.build-werror ext/ferry/.fuzz-php84 ext/ferry/.build-contract
