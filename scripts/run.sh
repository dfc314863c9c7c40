#!/usr/bin/env bash
# `make run`: the voting service (examples/voting) on Ferry, backed by Tarantool.
#   - Tarantool with its data in ./var/voting (WAL on), on 127.0.0.1:3301 or the next free port;
#   - bin/ferry serve -c examples/voting/ferry.yaml, told the Tarantool URI through VOTING_TARANTOOL.
# Waits until both answer, prints the URL, and stops both on Ctrl-C / SIGTERM.
# `make run APP=hello` runs the hello example instead (bin/ferry serve with no config).
# `make run APP=voting-replicas` runs the voting service on a replica set instead: a master and
# two replicas (fresh data in ./var/voting-replicas, synchronous spaces unless VOTING_SYNC=0),
# reads served by the replicas, and a failover when the master dies (try kill -9 on it).
# Environment: FERRY_ADDRESS (127.0.0.1:8080), TARANTOOL_PORT (first port tried, 3301),
# VOTING_WAL_MODE (write).
set -euo pipefail
cd "$(dirname "$0")/.."

case ${APP:-voting} in
    hello) exec bin/ferry serve "$@" ;;
    voting | voting-replicas) ;;
    *) echo "run.sh: unknown APP=$APP (voting, voting-replicas or hello)" >&2; exit 2 ;;
esac

die() { echo "run.sh: $*" >&2; exit 1; }
command -v tarantool >/dev/null || die "tarantool is not installed (make deps installs it)"
[[ -x bin/ferry ]] || die "bin/ferry is missing: run make build"

# A port is free when nothing accepts a connection on it.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port N: the first free port from N upwards.
free_port() {
    local p=$1
    for ((i = 0; i < 100; i++)); do
        port_busy "$p" || { echo "$p"; return; }
        p=$((p + 1))
    done
    die "no free port for Tarantool from $1 upwards"
}
tnt_port=$(free_port "${TARANTOOL_PORT:-3301}")

export FERRY_ADDRESS=${FERRY_ADDRESS:-127.0.0.1:8080}
port_busy "${FERRY_ADDRESS##*:}" && die "$FERRY_ADDRESS is already in use (set FERRY_ADDRESS=127.0.0.1:<port>)"

if [[ ${APP:-voting} == voting-replicas ]]; then
    exec examples/voting/run-replicas.sh "$tnt_port" "$@"
fi

data=var/voting
mkdir -p "$data"
tnt_pid="" ferry_pid=""

stop() {
    trap - INT TERM EXIT
    # Ferry first: it drains in-flight requests, which may still need Tarantool.
    if [[ -n $ferry_pid ]] && kill -0 "$ferry_pid" 2>/dev/null; then
        kill -TERM "$ferry_pid" 2>/dev/null || true
        wait "$ferry_pid" 2>/dev/null || true
    fi
    if [[ -n $tnt_pid ]] && kill -0 "$tnt_pid" 2>/dev/null; then
        kill -TERM "$tnt_pid" 2>/dev/null || true
        wait "$tnt_pid" 2>/dev/null || true
    fi
    echo "run.sh: stopped"
}
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
trap stop EXIT

echo "run.sh: starting Tarantool on 127.0.0.1:$tnt_port (data in $data, log $data/tarantool.log)"
VOTING_LISTEN="127.0.0.1:$tnt_port" VOTING_DATA_DIR="$data" VOTING_WAL_MODE="${VOTING_WAL_MODE:-write}" \
    VOTING_LOG="$data/tarantool.log" tarantool examples/voting/tarantool/init.lua &
tnt_pid=$!
# init.lua only starts listening once the schema and the 16,000 stickers are in place.
for ((i = 0; i < 300; i++)); do
    kill -0 "$tnt_pid" 2>/dev/null || die "Tarantool exited during start; see $data/tarantool.log"
    port_busy "$tnt_port" && break
    sleep 0.1
done
port_busy "$tnt_port" || die "Tarantool did not listen on port $tnt_port within 30 s; see $data/tarantool.log"

export VOTING_TARANTOOL="tcp://voting:voting@127.0.0.1:$tnt_port"
bin/ferry serve -c examples/voting/ferry.yaml "$@" &
ferry_pid=$!
url="http://$FERRY_ADDRESS/"
for ((i = 0; i < 300; i++)); do
    kill -0 "$ferry_pid" 2>/dev/null || die "ferry exited during start (its messages are above)"
    if [[ $(curl -s -o /dev/null -w '%{http_code}' "$url" 2>/dev/null) == 200 ]]; then
        break
    fi
    sleep 0.1
done
[[ $(curl -s -o /dev/null -w '%{http_code}' "$url") == 200 ]] || die "$url did not answer 200 within 30 s"

echo
echo "  Voting service: $url   (the worst stickers: ${url}bad)"
echo "  Tarantool:      127.0.0.1:$tnt_port, data in $data"
echo "  Ctrl-C stops both."
echo
# Either process ending on its own ends the demo.
wait -n "$tnt_pid" "$ferry_pid" || true
echo "run.sh: a process exited; stopping" >&2
