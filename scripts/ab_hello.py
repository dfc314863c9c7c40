#!/usr/bin/env python3
"""A/B the hello figure of this tree's Ferry against another revision's.

Both servers run side by side, each with its own tree's SDK and examples/hello
app, and wrk loads them in alternation (A B A B ...), so a busy phase of a
shared machine falls on both. Prints requests per second and the CPU per
request of the server and its workers for every round, then the medians and
the spread.

    scripts/ab_hello.py OLD_REV [--rounds 8] [--seconds 4] [--connections 50] [--workers 2]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK_US = 1e6 / os.sysconf("SC_CLK_TCK")


def cpu_ticks(pid):
    """utime + stime of pid and its children (the workers), in clock ticks."""
    pids = [str(pid)] + subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True,
                                       text=True).stdout.split()
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total


def start(binary, tree, tmp, name, workers):
    cfg = os.path.join(tmp, name + ".yaml")
    with open(cfg, "w") as f:
        f.write(f"""server:
  address: "127.0.0.1:0"
admin:
  socket: "{tmp}/{name}.sock"
log:
  level: warn
pool:
  dir: "{tree}"
  command: ["php", "examples/hello/worker.php"]
  num_workers: {workers}
""")
    proc = subprocess.Popen([binary, "serve", "-c", cfg], stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        m = re.match(r"Ferry is serving on (\S+)", line)
        if m:
            return proc, m.group(1)
    sys.exit(f"{name} did not start")


def wrk(url, seconds, connections):
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", url], capture_output=True,
                         text=True).stdout
    return int(re.search(r"(\d+) requests in", out).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--connections", type=int, default=50)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = os.path.join(tmp, "old")
        os.mkdir(old_tree)
        archive = subprocess.run(["git", "-C", ROOT, "archive", a.old], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", old_tree], input=archive, check=True)
        subprocess.run(["go", "build", "-o", os.path.join(tmp, "ferry-old"), "./cmd/ferry"], cwd=old_tree, check=True)
        subprocess.run(["go", "build", "-o", os.path.join(tmp, "ferry-new"), "./cmd/ferry"], cwd=ROOT, check=True)
        systems = {}
        for name, tree in (("old", old_tree), ("new", ROOT)):
            systems[name] = start(os.path.join(tmp, "ferry-" + name), tree, tmp, name, a.workers)
        try:
            for proc, url in systems.values():  # warm-up, discarded
                wrk(url, 2, a.connections)
            results = {"old": [], "new": []}
            for r in range(a.rounds):
                order = ("old", "new") if r % 2 == 0 else ("new", "old")
                for name in order:
                    proc, url = systems[name]
                    c0 = cpu_ticks(proc.pid)
                    n = wrk(url, a.seconds, a.connections)
                    us = (cpu_ticks(proc.pid) - c0) * TICK_US / n
                    results[name].append((n / a.seconds, us))
                    print(f"round {r + 1} {name}: {n / a.seconds:9.0f} req/s {us:6.1f} us CPU/request", flush=True)
                time.sleep(1)
            for name, rs in results.items():
                rps = [x[0] for x in rs]
                cpu = [x[1] for x in rs]
                print(f"{name} ({a.old if name == 'old' else 'working tree'}): median {statistics.median(rps):.0f} req/s "
                      f"(min {min(rps):.0f}, max {max(rps):.0f}), median {statistics.median(cpu):.1f} us CPU/request "
                      f"(min {min(cpu):.1f}, max {max(cpu):.1f})")
            ratios = [n[0] / o[0] for o, n in zip(results["old"], results["new"])]
            print(f"new/old req/s per round: median {statistics.median(ratios):.3f} "
                  f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
        finally:
            for proc, _ in systems.values():
                proc.terminate()
                proc.wait()


if __name__ == "__main__":
    main()
