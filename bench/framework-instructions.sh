#!/bin/sh
# Instructions per request in a Symfony and a Laravel worker with ext/ferry, in the PHP
# loop (FERRY_EXT_LOOP=0) and in the extension's own, counted by callgrind: unlike the
# times of bench/run.py's symfony and laravel scenarios, the counts do not move when the
# machine is shared. The apps are php/symfony's and php/laravel's test apps, as in those
# scenarios (Symfony's GET /, Laravel's GET /hello/bench; Laravel's sessions in memory, so
# that no session file and no garbage collection lottery weigh on one run more than
# another). Each worker reads a file of pipelined jobs as its relay and writes its answers
# to /dev/null; the first read's jobs go through the PHP loop either way, so the figure is
# the difference between two runs divided by the difference in requests.
#
#   bench/framework-instructions.sh [requests]        default 300
#   APPS=symfony bench/framework-instructions.sh      one app only
#
# Needs valgrind, Debian's Symfony and Laravel packages and a built extension.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-300}
BASE=300
SO=${FERRY_EXT_SO:-$ROOT/ext/ferry/.build/modules/ferry.so}
[ -f "$SO" ] || { echo "framework-instructions.sh: $SO missing, run ext/ferry/build.sh" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PHP="php -d extension=$SO -d opcache.enable_cli=1 -d opcache.jit=off -d opcache.jit_buffer_size=0"

jobs() { # path, count -> a relay file: the handshake, then the jobs the gateway would send
	php -r '
require $argv[1];
$context = serialize(["method" => "GET", "uri" => $argv[2], "path" => $argv[2], "query" => "", "protocol" => "HTTP/1.1",
    "remote_addr" => "127.0.0.1:50000", "host" => "127.0.0.1:8080", "scheme" => "http",
    "headers" => ["Host" => ["127.0.0.1:8080"]]]);
$out = Ferry\Worker\FrameCodec::encode(Ferry\Worker\Frame::CONTROL | Ferry\Worker\Frame::JSON, [], "{\"pid\":1}");
for ($i = 1; $i <= (int) $argv[3]; $i++) {
    $out .= Ferry\Worker\FrameCodec::job(strlen($context), $i, $context);
}
echo $out;' "$ROOT/php/worker/autoload.php" "$1" "$2"
}
count() { # command... -> instructions of the whole run
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' | tr -d ,
}
symfony() { # loop, relay file
	(cd "$ROOT/php/symfony/tests/app" && FERRY_RELAY=pipes FERRY_EXT_LOOP=$1 APP_ENV=prod APP_DEBUG=0 \
		APP_RUNTIME='Ferry\Symfony\Runtime' APP_VAR_DIR="$TMP/var" count $PHP public/index.php <"$2")
}
laravel() {
	SESSION_DRIVER=array FERRY_RELAY=pipes FERRY_EXT_LOOP=$1 APP_ENV=production APP_DEBUG=false \
		count $PHP "$ROOT/php/laravel/bin/ferry-laravel" "$ROOT/php/laravel/tests/app" <"$2"
}
jobs / $BASE >"$TMP/symfony.base"
jobs / $((BASE + N)) >"$TMP/symfony.full"
jobs /hello/bench $BASE >"$TMP/laravel.base"
jobs /hello/bench $((BASE + N)) >"$TMP/laravel.full"
# Symfony compiles its container on the first boot: not part of any count.
mkdir "$TMP/var"
(cd "$ROOT/php/symfony/tests/app" && FERRY_RELAY=pipes APP_ENV=prod APP_DEBUG=0 APP_RUNTIME='Ferry\Symfony\Runtime' \
	APP_VAR_DIR="$TMP/var" $PHP public/index.php <"$TMP/symfony.base" >/dev/null)
for app in ${APPS:-symfony laravel}; do
	for loop in 0 1; do
		base=$($app $loop "$TMP/$app.base")
		full=$($app $loop "$TMP/$app.full")
		label="PHP loop"
		[ $loop = 1 ] && label="its own loop"
		echo "$app with ext/ferry, $label: $(( (full - base) / N )) instructions per request"
	done
done
