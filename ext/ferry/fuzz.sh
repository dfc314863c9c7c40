#!/bin/sh
# Fuzzes the frame decoder (ferry_frame.c), the request context reader (ferry_ser.c),
# the MessagePack item reader (ferry_msgpack_read.c), direct mode's HTTP parser
# (ferry_http*.c), its trusted_proxies walk (ferry_forwarded.c) and its multipart parser
# (ferry_multipart*.c), each for a few seconds.
#
#   ext/ferry/fuzz.sh [SECONDS]      per target; default 10 (or $FUZZ_SECONDS)
#
# With clang and its runtime (Debian: clang libclang-rt-14-dev) this is libFuzzer with
# ASan + UBSan; without them, gcc with ASan + UBSan and a random-mutation driver
# (fuzz/standalone.c). Seeds are the shared frame vectors; the corpus libFuzzer grows is
# kept in $FERRY_FUZZ_DIR (default ext/ferry/.fuzz) between runs. Exits non-zero on any
# crash, sanitizer report or failed invariant (the input is left in that directory).
set -eu

SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${FERRY_FUZZ_DIR:-$SRC/.fuzz}
SECONDS_TO_RUN=${1:-${FUZZ_SECONDS:-10}}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
mkdir -p "$OUT/seeds" "$OUT/corpus"

# Seeds: each shared vector behind the two selector bytes, and a few vectors in a row.
php -n -r '
$out = $argv[1];
$v = json_decode(file_get_contents($argv[2]), true);
$all = "";
foreach ($v as $i => $x) {
    $bytes = hex2bin($x["frame_hex"]);
    file_put_contents("$out/seed-$i", chr($i) . chr(7 * $i) . $bytes);
    if (strlen($bytes) < 200) { $all .= $bytes; }
}
file_put_contents("$out/seed-stream", "\x05\x21" . $all);
' "$OUT/seeds" "$SRC/tests/frames.json"

# Seeds for the context reader: gateway contexts behind the selector byte.
mkdir -p "$OUT/ser-seeds" "$OUT/ser-corpus"
php -n -r '
$out = $argv[1];
$contexts = [
    ["method" => "GET", "uri" => "/", "path" => "/", "remote_addr" => "127.0.0.1:1", "host" => "h", "headers" => ["Host" => ["h"]]],
    ["method" => "POST", "query" => "a=1", "cookies" => ["5" => "x", "s" => "y"], "form" => [["f", "v"]],
     "files" => [["up", "a.txt", "text/plain", "/tmp/x", 0, 12]], "parsed" => true, "n" => -3],
    [[[[["deep"]]]]],
];
foreach ($contexts as $i => $c) {
    file_put_contents("$out/seed-$i", chr(15 + 16 * $i) . serialize($c));
}
' "$OUT/ser-seeds"

# Seeds for the MessagePack reader: msgpack-test-suite encodings behind a cut-point byte.
mkdir -p "$OUT/msgpack-seeds" "$OUT/msgpack-corpus"
php -n -r '
$out = $argv[1];
$suite = json_decode(file_get_contents($argv[2]), true);
$i = 0;
foreach ($suite as $cases) {
    foreach ($cases as $case) {
        foreach ($case["msgpack"] as $hex) {
            file_put_contents("$out/seed-" . $i++, chr(7 * $i) . hex2bin(str_replace("-", "", $hex)));
        }
    }
}
// Tarantool ext values: decimal, uuid, error stack, datetime (8 and 16 bytes), interval; a reply-like map.
foreach (["d6010201234d", "d802" . str_repeat("ab", 16), "c70f0381009182000001a3616263", "83000001cf00000000000000070531000292a161c0",
    "d7047aa30f6300000000", "d8047aa30f630000000059ff6312b4000000", "c70b0604000101ccc803d0b30801",
    "c717060900ff010202fd030404fb050606f907ce3b9ac9ff0802", "92d40600c7170603" . "00d28000000002ce7fffffff06d38000000000000000"] as $hex) {
    file_put_contents("$out/seed-" . $i++, chr($i) . hex2bin($hex));
}
' "$OUT/msgpack-seeds" "$SRC/../../php/msgpack/tests/fixtures/msgpack-test-suite.json"

# Seeds for the HTTP parser: the differential table's requests (cmd/ferry's
# direct_verdicts_cases_test.go) behind the two selector bytes, and their chunked bodies alone.
mkdir -p "$OUT/http-seeds" "$OUT/http-corpus"
php -n -r '
$out = $argv[1];
foreach (json_decode(file_get_contents($argv[2]), true) as $i => $raw) {
    file_put_contents("$out/seed-$i", chr(0x80 | (37 * $i) & 0x7f) . chr(11 * $i) . $raw);
    $end = strpos($raw, "\r\n\r\n");
    if ($end !== false && stripos($raw, "transfer-encoding: chunked") !== false) {
        file_put_contents("$out/seed-body-$i", chr(0xc1) . chr(7 * $i) . substr($raw, $end + 4));
    }
}
' "$OUT/http-seeds" "$SRC/fuzz/http_seeds.json"
# Seeds for the trusted_proxies walk: a selector byte, header lines (first byte: which
# header), the Host last.
mkdir -p "$OUT/forwarded-seeds" "$OUT/forwarded-corpus"
php -n -r '
$out = $argv[1];
$seeds = [
    "\x00" . "\x00for=192.0.2.60;proto=https;host=example.com, for=10.1.1.1\n\x01203.0.113.9, 10.0.0.7\nh.example",
    "\x07" . "\x00for=\"[2001:db8:cafe::17]:4711\";proto=\"h\\ttps\";host=\"ex\\ample.com\"\n\x00for=unknown, for=_x\nh",
    "\x0c" . "\x01::ffff:10.1.2.3, fe80::1%eth0 , 10.0.0.9\n\x02http, https\n\x03shop.example:8443\n[::1]:80",
    "\x01" . "\x00" . str_repeat(", for=10.1.1.1", 20) . "\n\x01\xc2\xa0192.0.2.1\xe3\x80\x80\n\x02httpſ\nh",
];
foreach ($seeds as $i => $s) { file_put_contents("$out/seed-$i", $s); }
' "$OUT/forwarded-seeds"

# Seeds for the multipart parser: limits byte, Content-Type length, Content-Type, body.
mkdir -p "$OUT/multipart-seeds" "$OUT/multipart-corpus"
php -n -r '
$out = $argv[1];
$p = fn ($h, $c) => "--xYzZY\r\n$h\r\n\r\n$c\r\n";
$bodies = [
    $p("Content-Disposition: form-data; name=\"a\"", "1") . $p("Content-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\nContent-Type: text/plain", "hello\r\n--xYzZYx") . "--xYzZY--",
    "pre\r\n--xYzZY \t\nContent-Disposition: form-data; name=a; filename=\"\"\n\nv\n--xYzZY--junk",
    $p("content-disposition: FORM-DATA; NAME=\"q\\\"x\"; filename=\"C:\\d\\s.PHP. \"", "<?php") . "--xYzZY--",
    $p("Content-Di\u{17f}position:\u{a0}form-data; f\u{130}lename=b.txt; name=a", "x") . "--xYzZY",
];
$cts = ["multipart/form-data; boundary=xYzZY", "multipart/form-data; boundary*0=xY; boundary*1*=z%5aY", "Multipart/Form-Data; boundary=\"xYzZY\"; a=b"];
foreach ($bodies as $i => $b) {
    foreach ($cts as $j => $ct) {
        file_put_contents("$out/seed-$i-$j", chr(0x23 * ($i + 3 * $j) & 0xff) . chr(strlen($ct)) . $ct . $b);
    }
}
' "$OUT/multipart-seeds"

# fuzz TARGET "SOURCES" SEEDS CORPUS: one harness for $SECONDS_TO_RUN seconds.
fuzz() {
	target=$1 seeds=$3 corpus=$4
	sources=
	for f in $2; do sources="$sources $SRC/$f"; done
	if [ "$use_libfuzzer" = yes ] \
		&& "$CC_FUZZ" -g -O1 -fsanitize=fuzzer $SAN -I"$SRC" $sources "$SRC/fuzz/${target}_fuzz.c" \
			-o "$OUT/${target}_fuzz" 2>"$OUT/build.log"; then
		echo "fuzz.sh: $target, libFuzzer, ${SECONDS_TO_RUN}s"
		(
			cd "$OUT"
			"./${target}_fuzz" -max_total_time="$SECONDS_TO_RUN" -max_len=8192 -print_final_stats=1 \
				-artifact_prefix="$OUT/crash-$target-" "$corpus" "$seeds" 2>"$target.log" \
				|| { tail -40 "$target.log" >&2; exit 1; }
			grep -E "stat::number_of_executed_units|stat::new_units_added" "$target.log" || true
		)
	else
		echo "fuzz.sh: $target, libFuzzer unavailable ($CC_FUZZ with -fsanitize=fuzzer did not link; see $OUT/build.log), gcc driver, ${SECONDS_TO_RUN}s"
		gcc -g -O1 $SAN -I"$SRC" $sources "$SRC/fuzz/${target}_fuzz.c" "$SRC/fuzz/standalone.c" \
			-o "$OUT/${target}_fuzz_standalone"
		"$OUT/${target}_fuzz_standalone" "$SECONDS_TO_RUN" "$seeds"/*
	fi
}

CC_FUZZ=${CC_FUZZ:-clang}
use_libfuzzer=no
command -v "$CC_FUZZ" >/dev/null 2>&1 && use_libfuzzer=yes
fuzz frame ferry_frame.c "$OUT/seeds" "$OUT/corpus"
fuzz ser ferry_ser.c "$OUT/ser-seeds" "$OUT/ser-corpus"
fuzz msgpack "ferry_msgpack_read.c ferry_msgpack_tnt.c" "$OUT/msgpack-seeds" "$OUT/msgpack-corpus"
fuzz http "ferry_http.c ferry_http_fields.c ferry_http_grammar.c ferry_http_tables.c ferry_http_chunked.c" "$OUT/http-seeds" "$OUT/http-corpus"
fuzz forwarded "ferry_forwarded.c ferry_forwarded_parse.c ferry_forwarded_addr.c ferry_forwarded_text.c" "$OUT/forwarded-seeds" "$OUT/forwarded-corpus"
fuzz multipart "ferry_multipart.c ferry_multipart_ct.c ferry_multipart_spool.c ferry_multipart_text.c ferry_multipart_print.c" "$OUT/multipart-seeds" "$OUT/multipart-corpus"
