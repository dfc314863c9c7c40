# Two commands: `make run` (install what is missing, build, start the demo) and
# `make test` (every Go and PHP test). See README.md.
GO       ?= go
BIN      := bin/ferry
VERSION  := $(shell git describe --always --dirty 2>/dev/null || echo dev)
PHPUNIT  := phpunit --colors=never
PHP_PKGS := worker msgpack tarantool symfony laravel

.PHONY: all deps build run test test-go test-php test-packages test-bench fuzz bench clean

all: build

deps:
	@scripts/deps.sh

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/ferry

run: deps build
	scripts/run.sh

test: deps build test-packages test-go test-php test-bench fuzz
	@echo "make test: all suites passed"

test-go:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

test-php:
	@set -e; for p in $(PHP_PKGS); do \
	  if [ -f php/$$p/phpunit.xml.dist ]; then echo "== php/$$p"; $(PHPUNIT) -c php/$$p/phpunit.xml.dist; fi; \
	done

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
	rm -rf bin bench/results
