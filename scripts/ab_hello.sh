#!/bin/sh
# Alternated A/B rounds of hello through two builds of ferry, for changes that
# must not slow the fast path: scripts/ab_hello.sh <rev-A> <rev-B> [rounds] [seconds]
# Prints requests/s and the server's own CPU per request (ferry's process,
# not PHP's, from /proc) per round, and the medians of each side.
# SERVER_YAML adds keys under server: for both sides, SERVER_YAML_A and
# SERVER_YAML_B for one (e.g. SERVER_YAML_B="  request_id: false" with A=B=HEAD).
set -eu
A=$1 B=$2 ROUNDS=${3:-6} SECS=${4:-8}
ROOT=$(git rev-parse --show-toplevel)
TMP=$(mktemp -d)
trap 'kill $(cat "$TMP"/pid 2>/dev/null) 2>/dev/null || true; rm -rf "$TMP"' EXIT
for side in A B; do
	rev=$(eval echo \$$side)
	mkdir "$TMP/src$side"
	git -C "$ROOT" archive "$rev" | tar -x -C "$TMP/src$side"
	(cd "$TMP/src$side" && go build -o "$TMP/ferry$side" ./cmd/ferry)
done
for side in A B; do
	extra=$(eval echo "\"\${SERVER_YAML_$side:-}\"")
	cat > "$TMP/ferry$side.yaml" <<YAML
server:
  address: 127.0.0.1:18181
${SERVER_YAML:-}
$extra
admin:
  socket: $TMP/admin.sock
log:
  level: warn
pool:
  command: php $ROOT/examples/hello/worker.php
  num_workers: 2
YAML
done
round() {
	"$TMP/ferry$1" serve -c "$TMP/ferry$1.yaml" 2>/dev/null &
	echo $! > "$TMP/pid"
	until curl -sf http://127.0.0.1:18181/ >/dev/null; do sleep 0.1; done
	wrk -t2 -c50 -d1s http://127.0.0.1:18181/ >/dev/null # warm-up
	pid=$(cat "$TMP/pid")
	c0=$(awk '{print $14+$15}' /proc/$pid/stat)
	wrk -t2 -c50 -d"$SECS"s http://127.0.0.1:18181/ > "$TMP/wrk"
	c1=$(awk '{print $14+$15}' /proc/$pid/stat)
	n=$(awk '/requests in/ {print $1}' "$TMP/wrk")
	rps=$(awk '/Requests\/sec/ {print $2}' "$TMP/wrk")
	# clock ticks are 10ms: microseconds of ferry CPU per request
	echo "$rps $(echo "$c0 $c1 $n" | awk '{printf "%.2f", ($2-$1)*10000/$3}')"
	kill "$(cat "$TMP/pid")"; wait "$(cat "$TMP/pid")" 2>/dev/null || true
}
for i in $(seq "$ROUNDS"); do
	for side in A B; do
		r=$(round $side)
		echo "$side $r"
		echo "$r" | cut -d' ' -f1 >> "$TMP/$side"
		echo "$r" | cut -d' ' -f2 >> "$TMP/$side.cpu"
	done
done
med='{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f (min %.2f, max %.2f)", m, a[1], a[NR]}'
for side in A B; do
	printf '%s median req/s %s, ferry CPU us/request %s\n' "$side" "$(sort -n "$TMP/$side" | awk "$med")" "$(sort -n "$TMP/$side.cpu" | awk "$med")"
done
