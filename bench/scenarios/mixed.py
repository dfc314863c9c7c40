"""mixed: head-of-line blocking. Mostly fast requests with a few slow ones on 2 PHP workers:
does a fast request wait behind a slow one? Loaded with bench/loadgen, which reports latency
per request class (wrk cannot)."""

import os

from lib import loadgen, method, report
from lib.httpbench import cpu_meter, cpu_summaries, start_all, stop_all
from lib.systems import Ferry, NginxFpm, check

NAME = "mixed"
TITLE = "head-of-line blocking: 95% fast (1 ms) and 5% slow (200 ms) requests on 2 PHP workers"
COMPARES_REVISIONS = True
WORKERS = 2
MIX = [("fast", 95, 1000), ("slow", 5, 200_000)]  # class, weight, microseconds of usleep
CLASSES = [(name, weight, f"/?us={us}") for name, weight, us in MIX]
SEED = 1
TIMEOUT_S = 10
PCTS = ("p50", "p90", "p99", "max")


def systems(ctx):
    app = os.path.join(ctx.root, "bench", "apps", "mixed")
    worker = os.path.join(app, "worker.php")
    out = [Ferry(ctx, "ferry", "Ferry (default config)", worker, workers=WORKERS)]
    for rev in ctx.revisions.ready():
        # The bench's worker script, with that revision's SDK and binary.
        out.append(Ferry(ctx, rev.key, f"{rev.label} (default config)", worker, workers=WORKERS,
                         env={"FERRY_BENCH_SDK": rev.sdk_autoload()}, revision=rev))
    out.append(NginxFpm(ctx, "fpm", "nginx + php-fpm (static, 2 children)", os.path.join(app, "index.php"),
                        workers=WORKERS))
    return out


def check_mixed(s):
    check(s, CLASSES[0][2], want_body=f"slept {MIX[0][2]} us\n".encode(), want_type="text/plain")


def compare(ctx, started, binary):
    by_key = {s.key: s for s in started}

    def measure(key):
        s = by_key[key]
        dead = s.health()
        if dead:
            raise loadgen.LoadgenError(dead)
        cpu = cpu_meter(s)
        res = cpu(loadgen.flatten(loadgen.run(binary, s.url, ctx.settings.duration, ctx.connections, CLASSES,
                                              seed=SEED, timeout_s=TIMEOUT_S)))
        if res["non2xx"]:
            raise loadgen.LoadgenError(f"{res['non2xx']} responses were not 2xx/3xx ({res['argv']})")
        if not res["requests"]:
            raise loadgen.LoadgenError(f"no request completed ({res['argv']})")
        return res

    state = method.alternate(list(by_key), measure, ctx.settings, "rps", ctx.progress)
    out = {}
    for key, st in state.items():
        if st["error"]:
            ctx.fail(f"{by_key[key].label}: {st['error']}")
        win = method.window_of(st, ctx.settings)
        classes = {}
        for name, _, _ in CLASSES:
            classes[name] = {"rps": method.summary([r[f"{name}_rps"] for r in win])}
            for p in PCTS:
                classes[name][f"{p}_ms"] = method.summary([r[f"{name}_{p}_ms"] for r in win])
        out[key] = {"label": by_key[key].label, "settled": st["settled"], "error": st["error"],
                    "quick": ctx.settings.quick, "iterations": st["iterations"], "rounds": st["rounds"],
                    "window": len(win), "rps": method.summary([r["rps"] for r in win]),
                    "failed_share": method.summary([r["failed_share"] for r in win]),
                    **cpu_summaries(win),
                    "classes": classes, "_state": st}
    return out


def paired(results, label, a, b, metric, settings):
    ra, rb = results.get(a), results.get(b)
    r = None
    if ra and rb and ra["iterations"] and rb["iterations"]:
        r = method.paired_ratios(ra["_state"], rb["_state"], metric, settings)
    return {"label": label, "a": a, "b": b, "metric": metric, "ratio": r,
            "reason": None if r else "one side did not run"}


def verdict(r):
    """Lower is better for a latency ratio A/B."""
    if not r:
        return "not measured"
    if r["max"] < 1:
        return "lower in every round"
    if r["min"] > 1:
        return "higher in every round"
    return "no difference beyond the spread (range straddles 1)"


def ms(s, digits=1):
    return report.num(s["median"], digits) if s else "-"


def run(ctx):
    sec = report.Section(NAME, TITLE)
    mean_ms = sum(w * us for _, w, us in MIX) / sum(w for _, w, _ in MIX) / 1000
    mix = " and ".join(f"{w}% {name} ({us / 1000:g} ms)" for name, w, us in MIX)
    sec.add(f"Each request sleeps in PHP (`usleep`) for `?us=` microseconds: {mix}, the class drawn per request "
            f"by a seeded generator (seed {SEED}: every system gets the same sequence on each connection). "
            f"`bench/loadgen` keeps {ctx.connections} keep-alive connections, each sending its next request "
            f"when the previous answer is complete, and records every latency with its class. {WORKERS} PHP "
            "workers per system: Ferry with its default configuration (sequential workers, pipelined), "
            f"nginx + php-fpm with pm=static and {WORKERS} children. Ferry runs `bench/apps/mixed/worker.php`, "
            "php-fpm `bench/apps/mixed/index.php`.", "",
            f"The workers are the bottleneck: a request holds one for {mean_ms:.2f} ms on average, so "
            f"{WORKERS} workers serve at most {WORKERS / mean_ms * 1000:,.0f} requests/s and the "
            f"{ctx.connections} connections always have requests waiting. What the scenario shows is how a fast "
            "request waits: in one shared line (php-fpm's listen queue) or behind a slow request already "
            "handed to its worker. The point: **Ferry's p99 for the fast requests must not be worse than "
            "nginx + php-fpm's.**", "")
    binary = loadgen.build(ctx)
    started, errors = start_all(ctx, systems(ctx), check_mixed)
    try:
        if not started:
            return sec.failed("no system started: " + "; ".join(errors.values()))
        results = compare(ctx, started, binary)
    finally:
        stop_all(started)
    if not any(r["iterations"] for r in results.values()):
        return sec.failed("no system completed a measurement: " + "; ".join(
            r["error"] or "no data" for r in results.values()))

    rows = []
    for r in results.values():
        if not r["iterations"]:
            rows.append([r["label"], "-", "-", "-", "-", "0", r["error"] or "no data"])
            continue
        rows.append([r["label"], report.num(r["rps"]["median"]), report.spread_cell(r["rps"]),
                     f"{r['failed_share']['median']:.2%}", report.cpu_cell(r),
                     f"{len(r['iterations'])} ({r['window']} used)", report.settled_cell(r)])
    sec.table(["system", "req/s, all (median)", "min..max", "failed", "CPU us/request (front + PHP)", "iterations",
               "settled"], rows)
    rows = []
    for r in results.values():
        for name, c in r["classes"].items():
            if c["rps"]:
                rows.append([r["label"], name, report.num(c["rps"]["median"], 1), ms(c["p50_ms"]), ms(c["p90_ms"]),
                             f"**{ms(c['p99_ms'])}**", report.spread_cell(c["p99_ms"], 1), ms(c["max_ms"])])
    sec.add("Per request class (medians over the iterations used; latency in ms, from sending the request "
            "to the end of its response):", "")
    sec.table(["system", "class", "req/s", "p50", "p90", "p99", "p99 min..max", "max"], rows)
    for key, err in errors.items():
        sec.add(f"- **{key} not measured**: {err}")

    ratios = [paired(results, "Ferry / nginx+php-fpm: fast p99", "ferry", "fpm", "fast_p99_ms", ctx.settings),
              paired(results, "Ferry / nginx+php-fpm: fast p50", "ferry", "fpm", "fast_p50_ms", ctx.settings),
              paired(results, "Ferry / nginx+php-fpm: slow p99", "ferry", "fpm", "slow_p99_ms", ctx.settings),
              paired(results, "Ferry / nginx+php-fpm: req/s", "ferry", "fpm", "rps", ctx.settings)]
    for rev in ctx.revisions.ready():
        ratios += [paired(results, f"Ferry / {rev.label}: fast p99", "ferry", rev.key, "fast_p99_ms", ctx.settings),
                   paired(results, f"Ferry / {rev.label}: req/s", "ferry", rev.key, "rps", ctx.settings)]
    report.ratio_table(sec, ratios)

    ferry, fpm = results.get("ferry"), results.get("fpm")
    if ferry and fpm and ferry["iterations"] and fpm["iterations"]:
        f99, p99 = ferry["classes"]["fast"]["p99_ms"], fpm["classes"]["fast"]["p99_ms"]
        r = ratios[0]["ratio"]
        ok = f99["median"] <= p99["median"]
        line = (f"fast p99: Ferry {f99['median']:.1f} ms, nginx+php-fpm {p99['median']:.1f} ms: "
                f"Ferry {'not worse' if ok else 'WORSE'}; per round Ferry's is {verdict(r)}")
        sec.add(f"**Verdict**: {line}.", "")
        sec.summary.append(line)
    sec.summarize(ratios)

    for name, _, _ in CLASSES:
        bars = []
        for p in ("p50", "p90", "p99"):
            for r in results.values():
                s = r["classes"][name][f"{p}_ms"]
                if s:
                    bars.append({"label": r["label"], "value": s["median"], "lo": s["min"], "hi": s["max"],
                                 "group": p})
        sec.chart(ctx, f"mixed_{name}_latency.svg", f"mixed: latency of the {name} requests", "milliseconds",
                  bars, note="lower is better")
    bars = []
    for name, _, _ in CLASSES:
        for r in results.values():
            s = r["classes"][name]["rps"]
            if s:
                bars.append({"label": r["label"], "value": s["median"], "lo": s["min"], "hi": s["max"],
                             "group": f"{name} requests"})
    sec.chart(ctx, "mixed_rps.svg", "mixed: requests per second per class", "requests/s", bars)

    sec.data = {"classes": [{"name": n, "weight": w, "path": p} for n, w, p in CLASSES], "seed": SEED,
                "workers": WORKERS, "connections": ctx.connections,
                "results": {k: {kk: vv for kk, vv in v.items() if not kk.startswith("_")} for k, v in results.items()},
                "ratios": ratios, "start_errors": errors}
    return sec
