#!/bin/bash
# cpureq.sh ferrypid port: front+PHP CPU us per request over a 3 s wrk run (200 connections)
fp=$1; port=$2
all() { echo $1; for c in $(ps -o pid= --ppid $1); do all $c; done; }
cpu() { local t=0; for p in $(all $fp); do t=$((t + $(awk '{print $14+$15}' /proc/$p/stat))); done; echo $t; }
a=$(cpu); out=$(wrk -t1 -c200 -d3s --timeout 10s http://127.0.0.1:$port/); b=$(cpu)
n=$(echo "$out" | awk '/requests in/{print $1}')
echo "rps $(echo "$out" | awk '/Requests\/sec/{print $2}') cpu/req $(( (b-a)*10000000/n/1000 )) us"
