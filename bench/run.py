#!/usr/bin/env python3
"""Ferry benchmark harness (issue 6): `make bench [SCENARIO=name]`.

Starts every system under test on 127.0.0.1 with free ports, measures with the method of
bench/README.md, stops them, and writes bench/results/<UTC timestamp>/report.md (tables and
SVG charts) and results.json. Standard library only."""

import argparse
import datetime
import os
import shutil
import signal
import sys
import time
import traceback

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
sys.dont_write_bytecode = True  # no __pycache__ litter in the source tree

from lib import report  # noqa: E402
from lib.context import Context  # noqa: E402
from lib.method import Settings  # noqa: E402
from lib import proc  # noqa: E402
from lib.proc import stop_all_procs  # noqa: E402
import scenarios  # noqa: E402
from scenarios.burst import levels_arg as burst_levels  # noqa: E402


def parse_args(argv):
    cpus = os.cpu_count() or 1
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", action="append", choices=scenarios.names(),
                   help="run only this scenario (repeatable); default: all")
    p.add_argument("--quick", action="store_true",
                   help="CI smoke: ~1 s per system, 1 iteration, no settling; non-zero exit on any failure")
    p.add_argument("--duration", type=int, help="whole seconds of wrk load per iteration (default 5, quick 1)")
    p.add_argument("--connections", type=int, default=50, help="wrk connections (default 50)")
    p.add_argument("--threads", type=int, default=max(1, cpus // 2),
                   help="wrk threads (default: half the CPUs, so the servers keep the rest)")
    p.add_argument("--workers", type=int,
                   help="PHP processes per system (default: CPUs; the memory scenario: 4, as issue 33's figures)")
    p.add_argument("--tolerance", type=float, default=0.03, help="settle tolerance, (max-min)/median (0.03)")
    p.add_argument("--window", type=int, default=5, help="iterations that must agree (5)")
    p.add_argument("--max-iterations", type=int, default=10, help="cap on iterations per system (10)")
    p.add_argument("--pause", type=float, default=1.0, help="seconds between iterations (1)")
    p.add_argument("--out", default=os.path.join(BENCH, "results"), help="results root (bench/results)")
    p.add_argument("--keep-tmp", action="store_true", help="keep generated configs, apps and logs")
    p.add_argument("--shared-session", action="store_true",
                   help="start the servers in wrk's session: with scheduler autogroups the CPU is then "
                        "shared per thread, not per system (see bench/README.md, Method)")
    p.add_argument("--ferry-rev", action="append", metavar="REV", default=[],
                   help="also measure Ferry built from git revision REV (a temporary worktree) next to the "
                        "working tree's, in the scenarios that compare revisions (hello, framework, mixed, fiberhello, symfony, laravel, profile, soak); "
                        "repeatable")
    p.add_argument("--php", action="append", choices=["8.4"], default=[], metavar="VERSION",
                   help="also measure Ferry with its workers on PHP 8.4 (the trixie root of scripts/trixie-root.sh), "
                        "JIT off and on, and the 8.2 Ferry with the JIT on, in hello and framework")
    p.add_argument("--soak-requests", type=int, metavar="N",
                   help="requests in the soak scenario (default 5000000, quick 20000)")
    p.add_argument("--burst-steps", type=burst_levels, metavar="N,N,...",
                   help="burst scenario: connections per step (default 1,10,25,50,100,1)")
    p.add_argument("--burst-step", type=float, metavar="S", help="burst: seconds per step (default 5, quick 0.5)")
    p.add_argument("--burst-rounds", type=int, metavar="N", help="burst: passes per system (default 2, quick 1)")
    p.add_argument("--burst-tail", type=float, metavar="S",
                   help="burst: seconds the pool is still sampled after the last step (default 15, quick 1)")
    p.add_argument("--list", action="store_true", help="list scenarios and exit")
    a = p.parse_args(argv)
    for name in ("connections", "threads", "workers", "window", "max_iterations"):
        if getattr(a, name) is not None and getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(a, name)}")
    if a.soak_requests is not None and a.soak_requests < 1000:
        p.error(f"--soak-requests must be >= 1000, got {a.soak_requests}")
    if a.burst_step is not None and not 0.2 <= a.burst_step <= 600:
        p.error(f"--burst-step must be between 0.2 and 600 seconds, got {a.burst_step}")
    if (a.burst_rounds is not None and a.burst_rounds < 1) or (a.burst_tail or 0) < 0:
        p.error("--burst-rounds must be >= 1 and --burst-tail >= 0")
    if a.duration is not None and not 1 <= a.duration <= 600:
        p.error(f"--duration must be between 1 and 600 seconds (wrk takes whole seconds), got {a.duration}")
    if not 0 < a.tolerance < 1:
        p.error(f"--tolerance must be between 0 and 1 (0.03 = 3%), got {a.tolerance}")
    if a.pause < 0:
        p.error(f"--pause must be >= 0, got {a.pause}")
    return a


def loadavg():
    """The 1-minute load average: on a shared machine it explains a noisy scenario."""
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv):
    a = parse_args(argv)
    if a.list:
        for s in scenarios.REGISTRY:
            print(f"{s.NAME:<12} {s.TITLE}")
        return 0
    proc.SHARED_SESSION = a.shared_session
    settings = Settings(duration=a.duration or (1 if a.quick else 5), tolerance=a.tolerance, window=a.window,
                        max_iterations=a.max_iterations, pause=a.pause, warmup=not a.quick, quick=a.quick)
    now = datetime.datetime.now(datetime.timezone.utc)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    out_dir = os.path.join(a.out, stamp)
    n = 1
    while os.path.exists(out_dir):
        n += 1
        out_dir = os.path.join(a.out, f"{stamp}-{n}")
    os.makedirs(out_dir)
    root = os.path.dirname(BENCH)
    ctx = Context(root, out_dir, settings, a.connections, a.threads, a.workers or os.cpu_count() or 1,
                  keep_tmp=a.keep_tmp, ferry_revs=a.ferry_rev, php_versions=a.php)
    ctx.workers_given = a.workers is not None
    ctx.soak_requests = a.soak_requests
    ctx.burst = {"levels": a.burst_steps, "step_s": a.burst_step, "rounds": a.burst_rounds, "tail_s": a.burst_tail}
    selected = [scenarios.get(n) for n in a.scenario] if a.scenario else scenarios.REGISTRY
    if a.ferry_rev and not any(getattr(m, "COMPARES_REVISIONS", False) for m in selected):
        ctx.progress("--ferry-rev: none of the selected scenarios compares revisions; nothing will be built")
    if a.php and not any(getattr(m, "COMPARES_PHP", False) for m in selected):
        ctx.progress("--php: none of the selected scenarios (hello, framework) compares PHP versions")

    # SIGTERM (from make or CI) must still stop every server we started: turn it into an exception.
    signal.signal(signal.SIGTERM, _interrupt)
    ctx.progress(f"results in {out_dir}")
    ctx.progress(settings.describe())
    sections = []
    t0 = time.monotonic()
    interrupted = False
    try:
        ctx.ensure_ferry()
        for mod in selected:
            ctx.scenario = mod.NAME
            ctx.progress(f"== {mod.NAME}: {mod.TITLE}")
            load_before = loadavg()
            try:
                sec = mod.run(ctx)
            except KeyboardInterrupt:
                raise
            except Exception as e:  # noqa: BLE001 - one broken scenario must not hide the others
                sec = report.Section(mod.NAME, mod.TITLE).failed(f"{type(e).__name__}: {e}")
                sec.add("```", traceback.format_exc().rstrip(), "```")
                ctx.fail(f"scenario crashed: {e}")
            if sec.status == "failed" and not any(f.startswith(mod.NAME + ":") for f in ctx.failures):
                ctx.fail(sec.reason)
            sec.load = (load_before, loadavg())
            sections.append(sec)
            ctx.progress(f"{mod.NAME}: {sec.status}{' (' + sec.reason + ')' if sec.reason else ''}")
    except KeyboardInterrupt:
        interrupted = True
        ctx.scenario = "-"
        ctx.fail("interrupted")
    finally:
        ctx.scenario = "-"
        stop_all_procs()
        # After the servers, which ran from the worktrees; also when the run failed early.
        ctx.revisions.cleanup()
    options = " ".join(argv) or "(defaults)"
    report.write(ctx, sections, report.environment(root), now.strftime("%Y-%m-%d %H:%M:%S UTC"),
                 time.monotonic() - t0, options)
    if not ctx.keep_tmp and not ctx.failures:
        shutil.rmtree(ctx.tmp, ignore_errors=True)
    if ctx.sock_dir != ctx.tmp:
        shutil.rmtree(ctx.sock_dir, ignore_errors=True)

    print("\n==== summary " + "=" * 60)
    for sec in sections:
        if sec.status != "ok":
            print(f"{sec.name:<12} {sec.status}: {sec.reason}")
            continue
        print(f"{sec.name:<12} ok")
        for line in sec.summary:
            print(f"    {line}")
    print(f"report: {os.path.join(out_dir, 'report.md')}")
    if ctx.failures:
        print(f"{len(ctx.failures)} failure(s):", file=sys.stderr)
        for f in ctx.failures:
            print(f"  - {f}", file=sys.stderr)
        return 130 if interrupted else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
