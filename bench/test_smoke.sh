#!/usr/bin/env bash
# The benchmark harness's own tests: unit tests of its parsers and statistics, bench/loadgen
# against a local server, the --ferry-rev worktree handling, then the CI smoke runs
# (`run.py --quick --scenario hello`, again with `--php 8.4` when the trixie root exists,
# then `mixed`, `soak`, `memory`, `respawn`, `fiberio` and the others that have one, into temp dirs,
# checked for numbers).
# Needs bin/ferry (make build), wrk, nginx, php-fpm8.2, go and git. Takes about 2 min.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 -B -m unittest discover -s bench/tests -v
