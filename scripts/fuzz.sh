#!/usr/bin/env bash
# A short coverage-guided run of each Go decoder on top of its seed corpus.
# Go's fuzz coordinator sometimes ends a time-boxed run with a bare "context deadline
# exceeded" when the machine is busy, without any failing input; such a run is
# repeated once. A real finding ("Failing input written to ...") always fails.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}

fuzz() { # package target seconds
    local out rc
    for attempt in 1 2; do
        out=$($GO test -run XXX -fuzz "$2" -fuzztime "$3" -parallel 2 "$1" 2>&1)
        rc=$?
        echo "$out" | grep -v '^fuzz: elapsed'
        [ $rc -eq 0 ] && return 0
        if echo "$out" | grep -q 'Failing input' || ! echo "$out" | grep -q 'context deadline exceeded'; then
            return $rc
        fi
        echo "fuzz: $1 $2 stopped on the coordinator's deadline without a finding; running again"
    done
    return 1
}

fuzz ./internal/frame FuzzParse 10s &&
fuzz ./internal/config '^FuzzParse$' 5s &&
fuzz ./internal/config FuzzParseRoadRunner 5s &&
fuzz ./internal/protocol/ferryproto FuzzScanAnswer 5s &&
fuzz ./internal/gateway FuzzEncodeRequest 5s &&
fuzz ./internal/gateway FuzzCookies 5s &&
fuzz ./internal/gateway FuzzTargetShortcut 5s &&
fuzz ./internal/gateway FuzzTargetGrammar 10s &&
fuzz ./internal/multipart FuzzMultipart 5s &&
fuzz ./internal/static FuzzStaticPath 5s &&
fuzz ./internal/protocol/rrproto FuzzDecodeResponse 5s &&
fuzz ./internal/jsonq FuzzAppend 3s &&
fuzz ./internal/gateway FuzzForwarded 3s &&
fuzz ./internal/phplog FuzzOutputFormats 5s &&
fuzz ./internal/observe FuzzTraceparent 3s &&
fuzz ./internal/observe FuzzTracestate 3s &&
fuzz ./internal/observe FuzzLineJoiner 3s &&
fuzz ./internal/observe/otlp FuzzAppendRequest 5s &&
fuzz ./internal/observe/otlp FuzzDecodeResponse 5s &&
fuzz ./internal/observe/otlp FuzzParsePairs 3s &&
fuzz ./internal/pool FuzzParseRollup 3s
