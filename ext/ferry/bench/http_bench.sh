#!/bin/sh
# Builds and runs http_bench.c (-O2, as the extension is built); with libhttp-parser-dev
# installed it compares with http_parser on the same request. Argument: parses per round.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${TMPDIR:-/tmp}/ferry_http_bench
extra=
if [ -f /usr/include/http_parser.h ]; then extra="-DWITH_HTTP_PARSER -lhttp_parser"; fi
cc -O2 -I"$SRC" "$SRC"/bench/http_bench.c "$SRC"/ferry_http.c "$SRC"/ferry_http_fields.c "$SRC"/ferry_http_grammar.c \
	"$SRC"/ferry_http_tables.c "$SRC"/ferry_http_chunked.c $extra -o "$OUT"
"$OUT" "$@"
