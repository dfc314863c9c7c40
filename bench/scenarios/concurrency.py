"""concurrency: hello at 50, 150 and 500 connections on every system: throughput, latency
and the share of requests that failed (socket errors, timeouts, non-2xx)."""

import dataclasses

from lib import httpbench, report
from scenarios import hello

NAME = "concurrency"
TITLE = "hello at 50, 150 and 500 concurrent connections"
LEVELS = (50, 150, 500)
MAX_ITERATIONS = 6  # 3 levels x 7 systems: the full cap would make this scenario alone last ~25 min
RATIOS = [("Ferry / nginx+php-fpm", "ferry", "fpm"), ("Ferry / Go fasthttp (ceiling)", "ferry", "go"),
          ("Ferry (pipeline) / Ferry (pipeline=1)", "ferry", "ferry-p1")]


def run(ctx):
    sec = report.Section(NAME, TITLE)
    settings = dataclasses.replace(ctx.settings, max_iterations=min(ctx.settings.max_iterations, MAX_ITERATIONS))
    sec.add(f"The hello systems (see the hello scenario) loaded at each connection count in turn, at most "
            f"{settings.max_iterations} iterations per system and level. "
            "wrk's timeout is 2 s: a request not answered by then counts as timed out. `failed` = "
            "(non-2xx + socket errors + timeouts) / (completed + refused + timed-out requests). "
            "Errors here are measured, not fatal.", "")
    started, errors = httpbench.start_all(ctx, hello.systems(ctx), hello.check_hello)
    by_level = {}
    try:
        if not started:
            return sec.failed("no system started: " + "; ".join(errors.values()))
        for level in LEVELS:
            ctx.progress(f"--- {level} connections")
            by_level[level] = httpbench.compare(ctx, started, connections=level, errors_fatal=False,
                                                settings=settings)
    finally:
        httpbench.stop_all(started)

    rows, rps_bars, p99_bars, ratio_rows, data = [], [], [], [], {}
    for level, results in by_level.items():
        for r in results.values():
            if not r["iterations"]:
                rows.append([level, r["label"], "-", "-", "-", "-", "-", "-", r["error"] or "no data"])
                continue
            rows.append([level, r["label"], report.num(r["rps"]["median"]), report.spread_cell(r["rps"]),
                         report.num(r["p50_ms"]["median"], 2), report.num(r["p99_ms"]["median"], 2),
                         f"{r['failed_share']['median']:.2%}", report.cpu_cell(r), errors_cell(r)])
            p99_bars.append({"label": r["label"], "value": r["p99_ms"]["median"], "lo": r["p99_ms"]["min"],
                             "hi": r["p99_ms"]["max"], "group": f"{level} connections"})
        rps_bars += report.rps_bars(results, group=f"{level} connections")
        ratios = httpbench.ratios(results, RATIOS, settings)
        for r in ratios:
            ratio_rows.append([level, r["label"], report.ratio_cell(r["ratio"]) if r.get("ratio") else "-"])
        sec.summarize(ratios, prefix=f"{level} conns ")
        data[str(level)] = {"results": httpbench.public(results), "ratios": ratios}
    sec.table(["connections", "system", "RPS (median)", "RPS min..max", "p50 ms", "p99 ms", "failed",
               "CPU us/request (front + PHP)", "errors (all iterations)"], rows)
    sec.table(["connections", "ratio (paired per round)", "median (min .. max)"], ratio_rows)
    sec.chart(ctx, "concurrency_rps.svg", "concurrency: requests per second", "requests/s", rps_bars)
    sec.chart(ctx, "concurrency_p99.svg", "concurrency: p99 latency", "milliseconds", p99_bars)
    for key, err in errors.items():
        sec.add(f"- **{key} not measured**: {err}")
    sec.data = {"levels": data, "start_errors": errors}
    return sec


def errors_cell(r):
    its = r["iterations"]
    socket = sum(i["connect_errors"] + i["write_errors"] for i in its)
    reads = sum(i["read_errors"] for i in its)
    text = f"timeouts {sum(i['timeouts'] for i in its)}, non-2xx {sum(i['non2xx'] for i in its)}, "
    if r["eof_delimited"]:
        # wrk counts each close-delimited response of php -S as a read error.
        text += f"socket {socket} (+{reads} closes after a response)"
    else:
        text += f"socket {socket + reads}"
    return text + ("" if r["settled"] or r["quick"] else "; not settled")
