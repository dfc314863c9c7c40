#!/usr/bin/env bash
# The host's bin/ferry serving hello with its workers on PHP 8.4 in the trixie root
# (pool.command: [scripts/php84, ...]), pure PHP and with the 8.4 build of ext/ferry given
# as $1: each answers, each worker really runs in the root with the relay's fds 3 and 4,
# and after ferry stops no worker and no mount is left. Run by `make test-matrix`.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
SO=${1:?usage: php84_serve_test.sh path/to/php8.4/ferry.so}
ROOT=${FERRY_TRIXIE_ROOT:-$REPO/.cache/trixie-root}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ferry-php84-serve.XXXXXX")
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
fail() { echo "php84_serve_test: FAIL: $*" >&2; [ -f "$TMP/log" ] && cat "$TMP/log" >&2; exit 1; }

serve() { # $1: pool.php.extension
  cat >"$TMP/ferry.yaml" <<EOF
server:
  address: 127.0.0.1:0
pool:
  command: [$REPO/scripts/php84, examples/hello/worker.php]
  dir: $REPO
  num_workers: 2
  php:
    extension: $1
EOF
  : >"$TMP/log"
  bin/ferry serve -c "$TMP/ferry.yaml" >"$TMP/log" 2>&1 &
  pid=$!
  # The "ferry serving" line comes once every worker has done its handshake; tail ends
  # with ferry, so a ferry that dies at start ends the wait too.
  local line up=0 tailpid fd
  exec {fd}< <(tail -n +1 -f --pid "$pid" "$TMP/log")
  tailpid=$!
  while IFS= read -r -t 30 line <&"$fd"; do
    case $line in *'msg="ferry serving"'*) up=1; break ;; esac
  done
  kill "$tailpid" 2>/dev/null || true
  exec {fd}<&-
  [ "$up" = 1 ] || fail "ferry did not start (extension: $1)"
  url=$(sed -n 's/.*msg="ferry serving" url=\([^ ]*\).*/\1/p' "$TMP/log" | head -n 1)
  body=$(curl -sS --max-time 10 "$url/") || fail "no answer from $url"
  [ "$body" = "Hello, world" ] || fail "answer: $body"
  # pool.boot: fork: ferry's child is the zygote, and the workers are its children, holding
  # the relay pipes it was handed (at whatever descriptors the fork left them).
  local zygote workers pipes
  zygote=$(pgrep -P "$pid") || fail "no zygote process"
  workers=$(pgrep -P "$zygote") || fail "no worker processes"
  for w in $zygote $workers; do
    [ "$(readlink "/proc/$w/root")" = "$ROOT" ] || fail "process $w does not run in $ROOT"
    grep -q '^Name:.*php' "/proc/$w/status" || fail "process $w is not php: $(cat "/proc/$w/comm")"
  done
  for w in $workers; do
    pipes=$(find "/proc/$w/fd" -mindepth 1 -lname 'pipe:*' ! -name 0 ! -name 1 ! -name 2 | wc -l)
    [ "$pipes" -ge 2 ] || fail "worker $w has no relay pipes beside its standard streams"
  done
  kill -TERM "$pid"
  wait "$pid" || fail "ferry exited with $? on SIGTERM"
  pid=""
  for w in $zygote $workers; do
    [ -d "/proc/$w" ] && fail "process $w outlived ferry"
  done
  true
}

serve off
grep -q 'ext/ferry: off' "$TMP/log" || fail "extension off was not logged"
serve "$SO"
grep -q 'msg="ext/ferry: loaded' "$TMP/log" || fail "ext/ferry not loaded in the PHP 8.4 workers"
if grep -q " $ROOT/" /proc/self/mountinfo; then fail "a mount under $ROOT is left on the host"; fi
echo "php84_serve_test: ok (host bin/ferry, PHP 8.4 workers in $ROOT, pure PHP and ext/ferry)"
