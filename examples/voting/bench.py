#!/usr/bin/env python3
"""The voting service's load test: wrk -c50 against the same PHP app on

  ferry           bin/ferry, one persistent Tarantool connection per worker
  ferry-fibers    the same with pool.fibers: true (requests of a worker interleave while they
                  wait for Tarantool, and share its connection and writes)
  fpm-connect     nginx + PHP-FPM, a new Tarantool connection (connect, greeting, AUTH) per request
  fpm-persistent  nginx + PHP-FPM, persistent sockets reused by each FPM process

with Tarantool's WAL on (wal_mode=write) and off (none). Everything runs on 127.0.0.1 free
ports from configs generated in a temp dir, and is stopped at the end. PHP-FPM gets
pm=static with as many processes as Ferry has workers. Python stdlib only.

  examples/voting/bench.py [--duration 10] [--warmup 2] [--rounds 3] [--connections 50] [--workers N]
                           [--wal write,none] [--systems ferry,ferry-fibers,fpm-connect,fpm-persistent]
                           [--returning] [--json FILE] [--keep]

Progress goes to stderr; the table, the ratios and, last, one JSON line go to stdout (also
written to FILE with --json), for the bench/ harness.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from bench_stack import ROOT, Procs, check_page, cpu_seconds, log, start_ferry, start_fpm, start_tarantool
SYSTEMS = ("ferry", "ferry-fibers", "fpm-connect", "fpm-persistent")
DEFAULT_SYSTEMS = SYSTEMS


def parse_wrk(out):
    def ms(v, unit):
        return float(v) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]

    res = {}
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if not m:
        raise RuntimeError("cannot read wrk output:\n" + out)
    res["rps"] = float(m.group(1))
    m = re.search(r"Latency\s+([\d.]+)(us|ms|s|m)\s+([\d.]+)(us|ms|s|m)\s+([\d.]+)(us|ms|s|m)", out)
    if m:
        res["latency_avg_ms"] = round(ms(m.group(1), m.group(2)), 3)
        res["latency_stdev_ms"] = round(ms(m.group(3), m.group(4)), 3)
        res["latency_max_ms"] = round(ms(m.group(5), m.group(6)), 3)
    for pct in ("50", "90", "99"):
        m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s|m)", out, re.M)
        if m:
            res[f"latency_p{pct}_ms"] = round(ms(m.group(1), m.group(2)), 3)
    m = re.search(r"(\d+) requests in", out)
    res["requests"] = int(m.group(1)) if m else 0
    m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    res["non2xx"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    res["socket_errors"] = sum(int(x) for x in m.groups()) if m else 0
    return res


def wrk(port, seconds, connections, threads, cookie):
    argv = ["wrk", f"-c{connections}", f"-t{threads}", f"-d{seconds}s", "--latency", "--timeout", "5s"]
    if cookie:
        argv += ["-H", f"Cookie: {cookie}"]
    out = subprocess.run(argv + [f"http://127.0.0.1:{port}/"], capture_output=True, text=True, check=True).stdout
    return parse_wrk(out)


def measure(args, system, wal, port, tnt, server, cookie):
    cpu0 = (sum(cpu_seconds(p.pid) for p in server), cpu_seconds(tnt.pid))
    r = wrk(port, args.duration, args.connections, args.threads, cookie)
    cpu1 = (sum(cpu_seconds(p.pid) for p in server), cpu_seconds(tnt.pid))
    reqs = max(r["requests"], 1)
    r.update(system=system, wal_mode=wal,
             cpu_ms_per_request_server=round(1000 * (cpu1[0] - cpu0[0]) / reqs, 4),
             cpu_ms_per_request_tarantool=round(1000 * (cpu1[1] - cpu0[1]) / reqs, 4))
    return r


def median_run(runs):
    """The round with the median req/s (its latencies stay consistent with it), plus every round's req/s."""
    ordered = sorted(runs, key=lambda r: r["rps"])
    r = dict(ordered[(len(ordered) - 1) // 2])
    r["rps_runs"] = [x["rps"] for x in runs]
    return r


def run(args):
    """Everything side by side: one Tarantool per WAL mode, every system on each, then wrk
    against each combination in turn, round after round with the order rotating, so load from
    elsewhere on the machine hits all alike. Returns {(system, wal): [run per round]}."""
    tmp = tempfile.mkdtemp(prefix="voting-bench-")
    procs = Procs()
    combos = [(system, wal) for wal in args.wal for system in args.systems]
    runs = {c: [] for c in combos}
    try:
        tnts, servers, cookies = {}, {}, {}
        for wal in args.wal:
            log(f"starting Tarantool with wal_mode={wal}")
            tnts[wal] = start_tarantool(procs, tmp, wal)
        for system, wal in combos:
            log(f"starting {system} on the wal_mode={wal} Tarantool")
            where, uri = os.path.join(tmp, f"{system}-{wal}"), tnts[wal][1]
            if system.startswith("ferry"):
                servers[system, wal] = start_ferry(procs, where, uri, args.workers, system == "ferry-fibers")
            else:
                servers[system, wal] = start_fpm(procs, where, uri, args.workers, system == "fpm-persistent")
        for c in combos:
            cookie = check_page(servers[c][1])
            cookies[c] = cookie if args.returning else None
            if args.warmup:
                log(f"warming up {c[0]}, wal_mode={c[1]} for {args.warmup}s")
                wrk(servers[c][1], args.warmup, args.connections, args.threads, cookies[c])
        n, total = 0, len(combos) * args.rounds
        for rnd in range(args.rounds):
            shift = rnd * len(combos) // args.rounds
            for c in combos[shift:] + combos[:shift]:
                n += 1
                system, wal = c
                server, port = servers[c]
                log(f"[{n}/{total}] round {rnd + 1}: {system}, wal_mode={wal}, wrk -c{args.connections} for {args.duration}s")
                r = measure(args, system, wal, port, tnts[wal][0], server, cookies[c])
                r["round"] = rnd + 1
                runs[c].append(r)
                log(f"[{n}/{total}] {r['rps']:.0f} req/s, avg {r.get('latency_avg_ms', 0):.2f} ms"
                    + (f", {r['non2xx']} non-2xx" if r["non2xx"] else "")
                    + (f", {r['socket_errors']} socket errors" if r["socket_errors"] else ""))
    finally:
        procs.stop_all()
        if args.keep:
            log(f"configs and logs kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return runs


def median(xs):
    xs = sorted(xs)
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


def ratio(runs, a, b, key=lambda r: r["rps"]):
    """Median over rounds of a/b within the same round (neighbours in time, so a burst of
    outside load mostly cancels out)."""
    pairs = [key(x) / key(y) for x, y in zip(runs[a], runs[b]) if key(y) > 0]
    return median(pairs) if pairs else None


def cpu_total(r):
    return r["cpu_ms_per_request_server"] + r["cpu_ms_per_request_tarantool"]


def report(args, runs):
    results = [median_run(rs) for rs in runs.values()]
    print(f"\nVoting service, GET / ({'returning visitor' if args.returning else 'new visitor: uuid + upsert + top-9'}), "
          f"wrk -c{args.connections} -t{args.threads} -d{args.duration}s, median of {args.rounds} rounds, "
          f"{args.workers} PHP processes, {os.cpu_count()} CPUs\n")
    print(f"{'system':<16} {'WAL':<6} {'req/s':>9} {'avg ms':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} "
          f"{'CPU ms/req: server':>19} {'tarantool':>10}   req/s per round")
    for r in results:
        print(f"{r['system']:<16} {r['wal_mode']:<6} {r['rps']:>9.0f} {r.get('latency_avg_ms', 0):>8.2f} {r.get('latency_p50_ms', 0):>8.2f} "
              f"{r.get('latency_p99_ms', 0):>8.2f} {r['non2xx'] + r['socket_errors']:>7} {r['cpu_ms_per_request_server']:>19.3f} "
              f"{r['cpu_ms_per_request_tarantool']:>10.3f}   {' '.join(f'{x:.0f}' for x in r['rps_runs'])}")
    ratios = {}
    print("\nratios: median over rounds of the ratio within a round")
    for wal in args.wal:
        for mine in ("ferry", "ferry-fibers"):
            for other in ("fpm-connect", "fpm-persistent"):
                a, b = (mine, wal), (other, wal)
                if a in runs and b in runs:
                    rps = ratio(runs, a, b)
                    cpu = ratio(runs, b, a, cpu_total)
                    ratios[f"{mine}/{other}@{wal}"] = round(rps, 2)
                    ratios[f"cpu:{other}/{mine}@{wal}"] = round(cpu, 2)
                    print(f"  {mine + ' / ' + other:<30} (WAL {wal}): {rps:.2f}x req/s, {cpu:.2f}x less CPU per request")
    for system in args.systems:
        if (system, "write") in runs and (system, "none") in runs:
            r = ratio(runs, (system, "none"), (system, "write"))
            ratios[f"{system}:wal_none/wal_write"] = round(r, 3)
            print(f"  {system:<16} WAL off / WAL on: {r:.3f}x req/s")
    print()
    for key, bar in ratios.items():
        if "/fpm-connect@" in key and not key.startswith("cpu:"):
            print(f"bar: {key.split('/')[0]} >= 4x fpm-connect (WAL {key.split('@')[1]}): {'met' if bar >= 4 else 'NOT met'} ({bar:.2f}x)")
    doc = {"benchmark": "voting", "connections": args.connections, "threads": args.threads, "duration_s": args.duration,
           "rounds": args.rounds, "workers": args.workers, "cpus": os.cpu_count(), "returning_visitor": args.returning,
           "results": results, "ratios": ratios}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
    print(json.dumps(doc, separators=(",", ":")))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=int, default=10, help="seconds measured per run (default 10)")
    ap.add_argument("--warmup", type=int, default=2, help="seconds of unmeasured load first (default 2)")
    ap.add_argument("--rounds", type=int, default=3, help="measurements per system, alternating; the median is kept (default 3)")
    ap.add_argument("--connections", type=int, default=50, help="wrk -c (default 50, as in the article)")
    ap.add_argument("--threads", type=int, default=2, help="wrk -t (default 2)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="Ferry workers = FPM processes (default: CPUs)")
    ap.add_argument("--wal", default="write,none", help="wal modes, comma-separated (default write,none)")
    ap.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS),
                    help=f"comma-separated subset of {','.join(SYSTEMS)} (default {','.join(DEFAULT_SYSTEMS)})")
    ap.add_argument("--returning", action="store_true", help="send a valid cookie (returning visitor) instead of none")
    ap.add_argument("--json", metavar="FILE", help="also write the JSON result to FILE")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir with configs and logs")
    args = ap.parse_args()
    args.wal = [w for w in args.wal.split(",") if w]
    args.systems = [s for s in args.systems.split(",") if s]
    for w in args.wal:
        if w not in ("write", "fsync", "none"):
            ap.error(f"--wal: unknown mode {w!r}")
    for s in args.systems:
        if s not in SYSTEMS:
            ap.error(f"--systems: unknown system {s!r}")
    if min(args.duration, args.connections, args.threads, args.workers, args.rounds) < 1 or args.warmup < 0:
        ap.error("--duration, --connections, --threads, --workers and --rounds must be >= 1")
    missing = [b for b in ("tarantool", "php", "wrk") + (("nginx", "php-fpm8.2") if any(s.startswith("fpm") for s in args.systems) else ())
               if shutil.which(b) is None]
    if missing or not os.access(os.path.join(ROOT, "bin", "ferry"), os.X_OK):
        sys.exit(f"bench.py: missing {', '.join(missing) or 'bin/ferry (run make build)'}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        runs = run(args)
    except KeyboardInterrupt:
        log("interrupted; everything started was stopped")
        sys.exit(130)
    report(args, runs)


if __name__ == "__main__":
    main()
