#!/bin/sh
# Fuzzes the frame decoder (ferry_frame.c) and the MessagePack item reader
# (ferry_msgpack_read.c) for a few seconds each.
#
#   ext/ferry/fuzz.sh [SECONDS]      per target; default 10 (or $FUZZ_SECONDS)
#
# With clang and its runtime (Debian: clang libclang-rt-14-dev) this is libFuzzer with
# ASan + UBSan; without them, gcc with ASan + UBSan and a random-mutation driver
# (fuzz/standalone.c). Seeds are the shared frame vectors; the corpus libFuzzer grows is
# kept in $FERRY_FUZZ_DIR (default ext/ferry/.fuzz) between runs. The msgpack seeds are
# php/msgpack's msgpack-test-suite encodings, behind a cut-point byte. Exits non-zero on any
# crash, sanitizer report or failed invariant (the input is left in that directory).
set -eu

SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${FERRY_FUZZ_DIR:-$SRC/.fuzz}
SECONDS_TO_RUN=${1:-${FUZZ_SECONDS:-10}}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
mkdir -p "$OUT/seeds" "$OUT/corpus" "$OUT/msgpack-seeds" "$OUT/msgpack-corpus"

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
// Tarantool ext values: decimal, uuid, error stack; and a reply-like map.
foreach (["d6010201234d", "d802" . str_repeat("ab", 16), "c70f0381009182000001a3616263", "83000001cf00000000000000070531000292a161c0"] as $hex) {
    file_put_contents("$out/seed-" . $i++, chr($i) . hex2bin($hex));
}
' "$OUT/msgpack-seeds" "$SRC/../../php/msgpack/tests/fixtures/msgpack-test-suite.json"

CC_FUZZ=${CC_FUZZ:-clang}
if command -v "$CC_FUZZ" >/dev/null 2>&1 \
	&& "$CC_FUZZ" -g -O1 -fsanitize=fuzzer $SAN -I"$SRC" "$SRC/ferry_frame.c" "$SRC/fuzz/frame_fuzz.c" \
		-o "$OUT/frame_fuzz" 2>"$OUT/build.log"; then
	echo "fuzz.sh: libFuzzer, ${SECONDS_TO_RUN}s"
	cd "$OUT"
	./frame_fuzz -max_total_time="$SECONDS_TO_RUN" -max_len=8192 -print_final_stats=1 \
		-artifact_prefix="$OUT/crash-" corpus seeds 2>fuzz.log \
		|| { tail -40 fuzz.log >&2; exit 1; }
	grep -E "stat::number_of_executed_units|stat::new_units_added" fuzz.log || true
	"$CC_FUZZ" -g -O1 -fsanitize=fuzzer $SAN -I"$SRC" "$SRC/ferry_msgpack_read.c" "$SRC/fuzz/msgpack_fuzz.c" \
		-o "$OUT/msgpack_fuzz" 2>>"$OUT/build.log" || { cat "$OUT/build.log" >&2; exit 1; }
	echo "fuzz.sh: msgpack reader, libFuzzer, ${SECONDS_TO_RUN}s"
	./msgpack_fuzz -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -print_final_stats=1 \
		-artifact_prefix="$OUT/msgpack-crash-" msgpack-corpus msgpack-seeds 2>msgpack-fuzz.log \
		|| { tail -40 msgpack-fuzz.log >&2; exit 1; }
	grep -E "stat::number_of_executed_units|stat::new_units_added" msgpack-fuzz.log || true
else
	echo "fuzz.sh: libFuzzer unavailable ($CC_FUZZ with -fsanitize=fuzzer did not link; see $OUT/build.log), gcc driver, ${SECONDS_TO_RUN}s"
	gcc -g -O1 $SAN -I"$SRC" "$SRC/ferry_frame.c" "$SRC/fuzz/frame_fuzz.c" "$SRC/fuzz/standalone.c" \
		-o "$OUT/frame_fuzz_standalone"
	"$OUT/frame_fuzz_standalone" "$SECONDS_TO_RUN" "$OUT"/seeds/*
	gcc -g -O1 $SAN -I"$SRC" "$SRC/ferry_msgpack_read.c" "$SRC/fuzz/msgpack_fuzz.c" "$SRC/fuzz/standalone.c" \
		-o "$OUT/msgpack_fuzz_standalone"
	# standalone.c reads at most 64 seeds: take a spread of them
	"$OUT/msgpack_fuzz_standalone" "$SECONDS_TO_RUN" $(ls "$OUT"/msgpack-seeds/* | awk 'NR % 3 == 1' | head -64)
fi
