"""hello: the smallest response ("Hello, world\\n", text/plain) on every system."""

import os

from lib import httpbench, report
from lib.proc import rss_kib
from lib.systems import Ferry, GoHello, NginxFpm, PhpServer, check

NAME = "hello"
TITLE = "smallest response on every system"
COMPARES_REVISIONS = True
COMPARES_PHP = True
BODY = b"Hello, world\n"

RATIOS = [
    ("Ferry / nginx+php-fpm", "ferry", "fpm"),
    ("Ferry / nginx+php-fpm+preload", "ferry", "fpm-preload"),
    ("Ferry / Go fasthttp (ceiling)", "ferry", "go"),
    ("Ferry direct / Go fasthttp (ceiling)", "ferry-direct", "go"),
    ("Ferry direct / Ferry", "ferry-direct", "ferry"),
    ("Ferry / Go net/http", "ferry", "go-nethttp"),
    ("Ferry (pipeline) / Ferry (pipeline=1)", "ferry", "ferry-p1"),
    ("Ferry / php -S (floor)", "ferry", "php-s"),
    ("php-fpm+preload / php-fpm", "fpm-preload", "fpm"),
]


def systems(ctx, revisions=False):
    """revisions: add a Ferry per --ferry-rev, running that revision's own hello worker."""
    app = os.path.join(ctx.root, "bench", "apps", "hello")
    worker = os.path.join(ctx.root, "examples", "hello", "worker.php")
    revs = ctx.revisions.ready() if revisions else []
    php84 = ctx.php84.systems(worker, "Ferry") if revisions else []
    return [
        Ferry(ctx, "ferry", "Ferry (pipes, pipeline 32)", worker, admin=True),
    ] + [
        Ferry(ctx, r.key, f"{r.label} (pipes, pipeline 32)", r.path("examples", "hello", "worker.php"), revision=r)
        for r in revs
    ] + php84 + [
        Ferry(ctx, "ferry-direct", "Ferry (server.mode: direct)", worker, server=["  mode: direct"]),
        Ferry(ctx, "ferry-p1", "Ferry (pipeline=1)", worker, pipeline=1),
        NginxFpm(ctx, "fpm", "nginx + php-fpm", os.path.join(app, "index.php")),
        NginxFpm(ctx, "fpm-preload", "nginx + php-fpm + preload", os.path.join(app, "index.php"),
                 preload=os.path.join(app, "preload.php")),
        PhpServer(ctx, "php-s", "php -S (floor)", os.path.join(app, "index.php")),
        GoHello(ctx, "go", "Go fasthttp (ceiling)", stack="fasthttp"),
        GoHello(ctx, "go-nethttp", "Go net/http", stack="nethttp"),
    ]


def revision_ratios(ctx):
    return [(f"Ferry / {r.label}", "ferry", r.key) for r in ctx.revisions.ready()]


def check_hello(s):
    check(s, "/", want_body=BODY, want_type="text/plain")


def memory(started):
    """RSS of each system's PHP processes (KiB), and of a Ferry worker per `ferry workers`."""
    out = {}
    for s in started:
        pids = s.worker_pids()
        rss = [r for r in (rss_kib(p) for p in pids) if r]
        entry = {"processes": len(rss), "rss_kib": rss}
        if isinstance(s, Ferry) and s.admin:
            table = s.workers_table()
            entry["ferry_workers"] = table
            entry["ferry_workers_rss_kib"] = Ferry.parse_workers_rss(table)
        if s.kind == "go":
            entry = {"processes": 1, "rss_kib": [rss_kib(s.procs[0].pid) or 0], "server": True}
        out[s.key] = entry
    return out


def mib(values):
    return f"{sum(values) / len(values) / 1024:.1f}" if values else "-"


def run(ctx):
    sec = report.Section(NAME, TITLE)
    sec.add("Every system answers `GET /` with `Hello, world\\n` as text/plain: Ferry runs "
            "`examples/hello/worker.php`, php-fpm and `php -S` run `bench/apps/hello/index.php`, the Go "
            "servers are `bench/apps/gohello` with fasthttp (like Ferry's gateway: the ceiling) and net/http. "
            f"{ctx.workers} PHP processes per PHP system; opcache on everywhere, JIT off"
            + (" except in the JIT variants (see *PHP 8.2 and PHP 8.4* below)." if ctx.php84 else "."), "")
    started, errors = httpbench.start_all(ctx, systems(ctx, revisions=True), check_hello)
    try:
        if not started:
            return sec.failed("no system started: " + "; ".join(errors.values()))
        mem_boot = memory(started)
        results = httpbench.compare(ctx, started)
        mem_after = memory(started)
    finally:
        httpbench.stop_all(started)

    report.http_table(sec, results)
    if not any(r["iterations"] for r in results.values()):
        return sec.failed("no system completed a measurement: see the table")
    for key, err in errors.items():
        sec.add(f"- **{key} not measured**: {err}")
    ratios = httpbench.ratios(results, RATIOS + revision_ratios(ctx), ctx.settings)
    report.ratio_table(sec, ratios)
    sec.add("### CPU time per request", "",
            "User + system CPU time of each system's processes during each iteration (from /proc), divided "
            "by the requests served; wrk's own share is not counted. Steadier than requests per second on "
            "a shared machine. A Go-only server spends its time on HTTP; Ferry spends that too, plus the "
            "relay and the PHP workers, which is why its ceiling stays under the Go-only one.", "")
    report.cpu_table(sec, results)
    cpu_pairs = [("CPU per request, Ferry direct / Go fasthttp", "ferry-direct", "go"),
                 ("CPU per request, Ferry direct / Ferry", "ferry-direct", "ferry")]
    cpu_pairs += [(f"CPU per request, {label}", ka, kb) for label, ka, kb in revision_ratios(ctx)]
    report.ratio_table(sec, httpbench.ratios(results, cpu_pairs, ctx.settings, metric="cpu_us"))
    php84 = ctx.php84.section(sec, results, NAME)
    sec.chart(ctx, "hello_rps.svg", "hello: requests per second", "requests/s", report.rps_bars(results))
    bars = [{"label": r["label"], "value": r["p99_ms"]["median"], "lo": r["p99_ms"]["min"], "hi": r["p99_ms"]["max"]}
            for r in results.values() if r["p99_ms"]]
    sec.chart(ctx, "hello_p99.svg", "hello: p99 latency", "milliseconds", bars)

    sec.add("### Memory: RSS per PHP process, idle", "",
            "Measured from /proc/<pid>/status (VmRSS) right after start and again after the load. For Ferry "
            "the `ferry workers` table (admin socket) is shown too. Shared pages (opcache, libraries) count in "
            "every process, so sums over-state the real total.", "")
    rows = []
    for s in started:
        b, a = mem_boot.get(s.key, {}), mem_after.get(s.key, {})
        what = "server process (no PHP)" if b.get("server") else f"{b.get('processes', 0)} PHP processes"
        rows.append([s.label, what, mib(b.get("rss_kib", [])), mib(a.get("rss_kib", []))])
    sec.table(["system", "measured", "avg MiB after boot", "avg MiB after load"], rows)
    ferry_table = mem_after.get("ferry", {}).get("ferry_workers")
    if ferry_table:
        sec.add("`ferry workers` after the load:", "", "```", ferry_table.rstrip(), "```", "")

    sec.data = {"results": httpbench.public(results), "ratios": ratios, "start_errors": errors,
                "memory_after_boot": mem_boot, "memory_after_load": mem_after,
                **({"php84": php84} if php84 else {})}
    sec.summarize(ratios)
    cpu = {k: (r.get("cpu_front_us") or {}).get("median", 0) + (r.get("cpu_php_us") or {}).get("median", 0)
           for k, r in results.items() if r.get("cpu_front_us")}
    if cpu:
        sec.summary.append("CPU us per request: " + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()))
    ferry_rss = mem_after.get("ferry", {}).get("rss_kib")
    if ferry_rss:
        sec.summary.append(f"idle Ferry worker RSS after load: {mib(ferry_rss)} MiB")
    return sec
