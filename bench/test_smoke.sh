#!/usr/bin/env bash
# The benchmark harness's own tests: unit tests of its parsers and statistics, then the
# CI smoke run (`run.py --quick --scenario hello` into a temp dir, checked for numbers).
# Needs bin/ferry (make build), wrk, nginx, php-fpm8.2 and go. Takes about 20 s.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 -B -m unittest discover -s bench/tests -v
