#!/usr/bin/env bash
# `make run APP=voting-replicas` (through scripts/run.sh): the voting service on a Tarantool
# replica set, from the repository root:
#   - a master and two read-only replicas (tarantool/init.lua), fresh data in
#     ./var/voting-replicas/{1,2,3}, on the first free ports from $1 upwards; the votes,
#     sessions and ratings are synchronous spaces (quorum 2) unless VOTING_SYNC=0;
#   - bin/ferry serve -c examples/voting/ferry.yaml with all three URIs in VOTING_TARANTOOL,
#     so pages read the stickers from the replicas and votes go to the master;
#   - when the master dies (kill -9 it), tarantool/promote.lua makes the most advanced
#     replica the master; the site keeps serving throughout.
# Ctrl-C / SIGTERM stop everything (Ferry first).
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { echo "run-replicas.sh: $*" >&2; exit 1; }
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

first_port=${1:?usage: run-replicas.sh FIRST_PORT [ferry serve args]}
shift
data=var/voting-replicas
rm -rf "$data" # a replica set is bootstrapped as a whole: no leftovers of an earlier one
mkdir -p "$data"
export VOTING_SYNC=${VOTING_SYNC:-1}
export VOTING_REPLICATOR_PASSWORD=${VOTING_REPLICATOR_PASSWORD:-replicator}
# promote.lua logs in as admin; a fresh random password per run.
export VOTING_ADMIN_PASSWORD=${VOTING_ADMIN_PASSWORD:-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')}

ports=() pids=() ferry_pid=""
stop() {
    trap - INT TERM EXIT
    if [[ -n $ferry_pid ]] && kill -0 "$ferry_pid" 2>/dev/null; then
        kill -TERM "$ferry_pid" 2>/dev/null || true
        wait "$ferry_pid" 2>/dev/null || true
    fi
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    echo "run-replicas.sh: stopped"
}
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
trap stop EXIT

# start_node N [env...]: instance N (1 = the master) on the next free port.
start_node() {
    local n=$1 port=$first_port
    shift
    while port_busy "$port" || [[ " ${ports[*]} " == *" $port "* ]]; do
        port=$((port + 1))
        ((port < first_port + 200)) || die "no free port for Tarantool from $first_port upwards"
    done
    mkdir -p "$data/$n"
    env "$@" VOTING_LISTEN="127.0.0.1:$port" VOTING_DATA_DIR="$data/$n" VOTING_LOG="$data/$n/tarantool.log" \
        VOTING_MEMTX_MEMORY=268435456 tarantool examples/voting/tarantool/init.lua &
    pids[n]=$! ports[n]=$port
    for ((i = 0; i < 300; i++)); do
        kill -0 "${pids[n]}" 2>/dev/null || die "Tarantool $n exited during start; see $data/$n/tarantool.log"
        port_busy "$port" && return
        sleep 0.1
    done
    die "Tarantool $n did not listen on port $port within 30 s; see $data/$n/tarantool.log"
}

echo "run-replicas.sh: starting the master and two replicas (data in $data, synchronous: $VOTING_SYNC)"
start_node 1
upstream="replicator:$VOTING_REPLICATOR_PASSWORD@127.0.0.1:${ports[1]}"
start_node 2 VOTING_REPLICATION="$upstream" VOTING_READ_ONLY=1
start_node 3 VOTING_REPLICATION="$upstream" VOTING_READ_ONLY=1

export VOTING_TARANTOOL="tcp://voting:voting@127.0.0.1:${ports[1]},tcp://voting:voting@127.0.0.1:${ports[2]},tcp://voting:voting@127.0.0.1:${ports[3]}"
bin/ferry serve -c examples/voting/ferry.yaml "$@" &
ferry_pid=$!
url="http://$FERRY_ADDRESS/"
for ((i = 0; i < 300; i++)); do
    kill -0 "$ferry_pid" 2>/dev/null || die "ferry exited during start (its messages are above)"
    [[ $(curl -s -o /dev/null -w '%{http_code}' "$url" 2>/dev/null) == 200 ]] && break
    sleep 0.1
done
[[ $(curl -s -o /dev/null -w '%{http_code}' "$url") == 200 ]] || die "$url did not answer 200 within 30 s"

echo
echo "  Voting service: $url   (each page says which replica read its stickers)"
echo "  Master:   127.0.0.1:${ports[1]} (pid ${pids[1]})"
echo "  Replicas: 127.0.0.1:${ports[2]} (pid ${pids[2]}), 127.0.0.1:${ports[3]} (pid ${pids[3]})"
echo "  Try a failover while it serves:  kill -9 ${pids[1]}"
echo "  Ctrl-C stops everything."
echo

master=1 failed_over=""
while true; do
    exited=""
    wait -n -p exited "$ferry_pid" "${pids[@]}" || true
    if [[ $exited == "$ferry_pid" ]]; then
        echo "run-replicas.sh: ferry exited; stopping" >&2
        exit 1
    fi
    if [[ $exited != "${pids[master]}" || -n $failed_over ]]; then
        echo "run-replicas.sh: Tarantool (pid $exited) exited; stopping" >&2
        exit 1
    fi
    survivors=() others=()
    for n in 1 2 3; do
        if [[ $n != "$master" ]]; then
            survivors+=("admin:$VOTING_ADMIN_PASSWORD@127.0.0.1:${ports[n]}")
            others+=("$n")
        fi
    done
    echo "run-replicas.sh: the master (pid $exited) is gone; promoting a replica" >&2
    result=$(tarantool examples/voting/tarantool/promote.lua "${survivors[@]}") || die "failover failed"
    echo "run-replicas.sh: failover done: $result" >&2
    unset "pids[master]"
    for n in "${others[@]}"; do
        if [[ $result == *"127.0.0.1:${ports[n]}\""* ]]; then master=$n; fi
    done
    # Only one failover: with one replica left, a synchronous write has no quorum to spare.
    failed_over=1
done
