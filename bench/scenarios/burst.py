"""burst: the load steps from 1 to 100 connections and back on requests that wait (20 ms in
usleep), and each system's PHP pool must follow it. Ferry's elastic pool (forked and exec'd
workers) and its old fixed pool against nginx + php-fpm with pm = dynamic and pm = ondemand:
latency per step, and the pool's size sampled over the run (issue 33's goal: a burst absorbed
with p99 under FPM's pm = dynamic on the same load)."""

import argparse
import os
import time

from lib import burstreport, loadgen, poolsize, report
from lib.httpbench import start_all, stop_all
from lib.proc import StartError
from lib.systems import Ferry, NginxFpm, check

NAME = "burst"
TITLE = "load steps 1 → 100 connections and back on 20 ms requests: pool size and p99 per step"
FLOOR, CEILING = 2, 16
SLEEP_US = 20_000
CLASSES = [("burst", 1, f"/?us={SLEEP_US}")]
LEVELS = (1, 10, 25, 50, 100, 1)
SAMPLE_S = 0.2
TIMEOUT_S = 10
# Debian's shipped www.conf (pm.start_servers 2, min_spare 1, max_spare 3), pm.max_children raised to
# Ferry's ceiling: FPM as it is deployed. max_spare_servers 16 would never shed a child after the burst.
FPM_DYNAMIC = (f"pm = dynamic\npm.max_children = {CEILING}\npm.start_servers = {FLOOR}\n"
               "pm.min_spare_servers = 1\npm.max_spare_servers = 3")
# process_idle_timeout as Ferry's scale_down_after default (10s), which is FPM's default too.
FPM_ONDEMAND = f"pm = ondemand\npm.max_children = {CEILING}\npm.process_idle_timeout = 10s"


def levels_arg(text):
    """--burst-steps: comma-separated connection counts, each 1..1000."""
    try:
        out = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: want connection counts like 1,10,25,50,100,1") from None
    if not all(1 <= n <= 1000 for n in out):
        raise argparse.ArgumentTypeError(f"{text!r}: each step needs 1 to 1000 connections")
    return out


def options(ctx):
    o = getattr(ctx, "burst", None) or {}
    return {"levels": o.get("levels") or LEVELS,
            "step_s": o.get("step_s") or (0.5 if ctx.quick else 5.0),
            "rounds": o.get("rounds") or (1 if ctx.quick else 2),
            "tail_s": o.get("tail_s") if o.get("tail_s") is not None else (1.0 if ctx.quick else 15.0)}


def systems(ctx):
    """(system, the worker count it returns to when idle) in report order."""
    app = os.path.join(ctx.root, "bench", "apps", "mixed")
    worker, script = os.path.join(app, "worker.php"), os.path.join(app, "index.php")
    out = []
    for key, label, extra in (
            ("ferry-fork", f"Ferry elastic {FLOOR}..{CEILING}, fork", {"boot": "fork", "max_workers": CEILING}),
            ("ferry-exec", f"Ferry elastic {FLOOR}..{CEILING}, exec", {"boot": "exec", "max_workers": CEILING}),
            ("ferry-fixed", f"Ferry fixed {FLOOR}", {})):
        s = Ferry(ctx, key, label, worker, workers=FLOOR, admin=True)
        s.pool_extra = extra
        out.append((s, FLOOR))
    for key, label, pm, rest in (("fpm-dynamic", f"php-fpm dynamic {FLOOR}..{CEILING}", FPM_DYNAMIC, 3),
                                 ("fpm-ondemand", f"php-fpm ondemand 0..{CEILING}", FPM_ONDEMAND, 0)):
        s = NginxFpm(ctx, key, label, script, workers=CEILING)
        s.pm = pm
        out.append((s, rest))
    return out


def check_burst(s):
    check(s, CLASSES[0][2], want_body=f"slept {SLEEP_US} us\n".encode(), want_type="text/plain")


def one_pass(ctx, s, rest, binary, opts):
    """Starts s, runs every step against it while sampling its pool, samples the idle tail,
    stops it. Returns the pass's record, or raises StartError (already reported by start_all)
    or LoadgenError."""
    started, errors = start_all(ctx, [s], check_burst)
    if not started:
        raise StartError(errors.get(s.key, "did not start"))
    t0 = time.monotonic()
    sampler = poolsize.Sampler(poolsize.counter(s), t0, SAMPLE_S)
    sampler.start()
    steps = []
    try:
        for i, level in enumerate(opts["levels"]):
            dead = s.health()
            if dead:
                raise loadgen.LoadgenError(dead)
            start = time.monotonic() - t0
            res = loadgen.flatten(loadgen.run(binary, s.url, opts["step_s"], level, CLASSES, seed=i + 1,
                                              timeout_s=TIMEOUT_S))
            steps.append({"connections": level, "start_s": start, "end_s": time.monotonic() - t0,
                          "rps": res["rps"], "requests": res["requests"], "failed": res["failed"],
                          "failed_share": res["failed_share"], "p50_ms": res["burst_p50_ms"],
                          "p90_ms": res["burst_p90_ms"], "p99_ms": res["burst_p99_ms"],
                          "max_ms": res["burst_max_ms"], "workers_end": sampler.take()})
            ctx.progress(f"{s.label}: {level} connections: {res['rps']:,.0f} req/s, p99 "
                         f"{report.num(res['burst_p99_ms'], 1)} ms, {steps[-1]['workers_end']} workers")
        # A bench's tail is the measurement itself: how long the pool takes to shed the burst.
        time.sleep(opts["tail_s"])
        sampler.take()
    finally:
        samples = sampler.stop()
        metrics = poolsize.ferry_pool_metrics(s) if s.kind == "ferry" and s.procs else {}
        stop_all([s])
    last = steps[-1]["end_s"]
    back = next((t - last for t, n in samples if t >= last and n <= rest), None)
    return {"steps": steps, "samples": samples, "most": max((n for _, n in samples), default=None),
            "back_to_rest_s": back, "rest": rest, "metrics": metrics}


def measure(ctx, binary, opts):
    """Every system once per round, each round in a rotated order, every pass on a freshly
    started system (so each burst meets the pool at its floor)."""
    passes, labels, errors, keys = {}, {}, {}, []
    for rnd in range(opts["rounds"]):
        order = systems(ctx)
        keys = keys or [s.key for s, _ in order]
        order = order[rnd % len(order):] + order[:rnd % len(order)]
        for s, rest in order:
            labels[s.key] = s.label
            passes.setdefault(s.key, [])
            if s.key in errors:
                continue
            ctx.progress(f"round {rnd + 1}/{opts['rounds']}: {s.label}")
            try:
                passes[s.key].append(one_pass(ctx, s, rest, binary, opts))
            except StartError as e:
                errors[s.key] = str(e)
            except (loadgen.LoadgenError, OSError) as e:
                errors[s.key] = str(e)
                ctx.fail(f"{s.label}: {e}")
    return {k: passes[k] for k in keys if k in passes}, labels, errors


def describe(sec, opts):
    steps = ", ".join(str(n) for n in opts["levels"])
    sec.add(f"Every request sleeps {SLEEP_US // 1000} ms in PHP (`bench/apps/mixed`, `?us={SLEEP_US}`): a request "
            "holds a worker while costing almost no CPU, so how many requests run at once is set by the number of "
            "workers, not by the 2 cores, and a pool that does not grow makes requests queue (2 workers serve "
            f"at most {FLOOR * 1e6 / SLEEP_US:.0f} req/s). A CPU-bound app (the framework one) would show the cores, "
            "not the pool: on 2 cores more workers than cores only share them.", "",
            f"`bench/loadgen` runs the steps back to back: {steps} keep-alive connections, {opts['step_s']:g} s "
            "each (one loadgen run per step, new connections each step), then the pool is still sampled for "
            f"{opts['tail_s']:g} s without load. Each system's PHP worker count is read every {SAMPLE_S * 1000:.0f} ms "
            "(Ferry: starting, ready and working workers from the admin socket's `/workers`; php-fpm: the master's "
            f"children). {opts['rounds']} round(s): every system is started fresh for each pass, in a rotated "
            "order; per-step figures are medians over the rounds.", "",
            f"- **Ferry elastic, fork**: `num_workers: {FLOOR}`, `max_workers: {CEILING}`, `boot: fork`, default "
            "`scale_up_after` (10ms) and `scale_down_after` (10s), default pipeline",
            "- **Ferry elastic, exec**: the same with `boot: exec`",
            f"- **Ferry fixed**: `num_workers: {FLOOR}`, no `max_workers` (the pool before issue 33)",
            f"- **php-fpm dynamic**: Debian's `www.conf` spare settings (`start_servers {FLOOR}`, `min_spare_servers 1`, "
            f"`max_spare_servers 3`), `max_children {CEILING}`; FPM checks once a second and, with min_spare 1, "
            "starts at most one child per check",
            f"- **php-fpm ondemand**: `max_children {CEILING}`, `process_idle_timeout 10s`, no child at rest", "",
            f"{CEILING} workers at most: the sleep makes each worker serve about {1e6 / SLEEP_US:.0f} req/s for "
            f"little CPU, so {CEILING} of them ({CEILING * 1e6 / SLEEP_US:.0f} req/s) still fit 2 shared cores, and at "
            f"100 connections requests still queue (about {100 / CEILING:.0f} per worker), so the ceiling shows.", "")


def run(ctx):
    opts = options(ctx)
    sec = report.Section(NAME, TITLE)
    describe(sec, opts)
    binary = loadgen.build(ctx)
    results, labels, errors = measure(ctx, binary, opts)
    if not any(results.values()):
        return sec.failed("no system completed a pass: " + "; ".join(errors.values()))
    burstreport.write(ctx, sec, results, labels, errors, opts)
    sec.data = {"options": {k: list(v) if isinstance(v, tuple) else v for k, v in opts.items()},
                "sleep_us": SLEEP_US, "floor": FLOOR, "ceiling": CEILING, "sample_s": SAMPLE_S,
                "labels": labels, "passes": results, "errors": errors}
    return sec
