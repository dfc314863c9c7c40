"""framework: a generated framework-like app (~300 classes, autoloader, DI container,
router, middleware, templates) booted per request under FPM and once per worker in Ferry."""

import os
import sys

from lib import httpbench, report
from lib.proc import StartError
from lib.systems import Ferry, NginxFpm, check

NAME = "framework"
TITLE = "framework-like app: boot per request (FPM) vs boot once (Ferry)"
COMPARES_REVISIONS = True
COMPARES_PHP = True
RATIOS = [("Ferry / nginx+php-fpm", "ferry", "fpm"),
          ("Ferry direct / Ferry", "ferry-direct", "ferry"),
          ("Ferry / nginx+php-fpm+preload", "ferry", "fpm-preload"),
          ("php-fpm+preload / php-fpm", "fpm-preload", "fpm")]
BADOO_74 = [("PHP 7.4 (php-fpm)", 931), ("PHP 7.4 + preload", 1030), ("RoadRunner", 1089)]
CHECK_PATHS = ["/", "/catalog?page=2", "/orders/17"]


def generate(ctx, name="framework-app", sdk_autoload=None):
    sys.path.insert(0, os.path.join(ctx.root, "bench", "apps", "framework"))
    try:
        import gen
    finally:
        sys.path.pop(0)
    return gen.generate(os.path.join(ctx.tmp, name),
                        sdk_autoload or os.path.join(ctx.root, "php", "worker", "autoload.php"))


def run(ctx):
    sec = report.Section(NAME, TITLE)
    app = generate(ctx)
    ctx.progress(f"generated {app['classes']} classes, {app['routes']} routes in {app['root']}")
    sec.add(f"`bench/apps/framework/gen.py` wrote {app['classes']} classes ({app['modules']} modules of 15 classes "
            f"plus the core), {app['routes']} routes, 3 middleware and plain-PHP templates. Both entry points call "
            "the same `Framework\\Kernel`: `public/index.php` (FPM) boots the app on every request — providers, "
            "container bindings, routes, middleware — while Ferry's `worker.php` boots it once per worker and "
            "reuses the container's shared services. Request work is the same on both (no cross-request cache "
            "of results). wrk walks "
            f"{len(app['paths'])} paths (lists, pages, items, home) with varied theme/session cookies "
            "(`paths.lua`). The preload variant links every class at FPM start (`preload.php`).", "")
    systems = [Ferry(ctx, "ferry", "Ferry (boot once)", app["worker"]),
               Ferry(ctx, "ferry-direct", "Ferry (boot once, server.mode: direct)", app["worker"], server=["  mode: direct"])]
    for rev in ctx.revisions.ready():
        # The same generated app, its worker.php requiring that revision's SDK.
        rev_app = generate(ctx, f"framework-app-{rev.key}", rev.sdk_autoload())
        systems.append(Ferry(ctx, rev.key, f"{rev.label} (boot once)", rev_app["worker"], revision=rev))
    systems += ctx.php84.systems(app["worker"], "Ferry (boot once)")
    systems += [
        NginxFpm(ctx, "fpm", "nginx + php-fpm", app["fpm_script"]),
        NginxFpm(ctx, "fpm-preload", "nginx + php-fpm + preload", app["fpm_script"], preload=app["preload"]),
    ]
    reference = {}

    def check_same(s):
        # The same request must give the same page everywhere, or the comparison is void.
        for path in CHECK_PATHS:
            body = check(s, path, want_type="text/html", headers={"Cookie": "theme=dark; sid=abc"})
            if b"</html>" not in body:
                raise StartError(f"{s.label}: GET {path} is not a full page: {body[:200]!r}")
            if reference.setdefault(path, body) != body:
                raise StartError(f"{s.label}: GET {path} differs from {systems[0].label}'s page")

    started, errors = httpbench.start_all(ctx, systems, check_same)
    try:
        if not started:
            return sec.failed("no system started: " + "; ".join(errors.values()))
        results = httpbench.compare(ctx, started, script=app["lua"])
    finally:
        httpbench.stop_all(started)

    report.http_table(sec, results)
    if not any(r["iterations"] for r in results.values()):
        return sec.failed("no system completed a measurement: see the table")
    for key, err in errors.items():
        sec.add(f"- **{key} not measured**: {err}")
    ratios = httpbench.ratios(results, RATIOS + [(f"Ferry / {r.label}", "ferry", r.key)
                                                 for r in ctx.revisions.ready()], ctx.settings)
    report.ratio_table(sec, ratios)
    sec.add("### CPU time per request", "",
            "User + system CPU time of each system's processes during each iteration (from /proc), divided by "
            "the requests served; wrk's own share is not counted. Lower is better; the ratios are paired per "
            "round like the RPS ones.", "")
    report.cpu_table(sec, results)
    cpu_ratios = httpbench.ratios(results, [(f"CPU per request, Ferry / {r.label}", "ferry", r.key)
                                            for r in ctx.revisions.ready()]
                                  + [("CPU per request, Ferry / nginx+php-fpm", "ferry", "fpm"),
                                     ("CPU per request, Ferry direct / Ferry", "ferry-direct", "ferry")],
                                  ctx.settings, metric="cpu_us")
    report.ratio_table(sec, cpu_ratios)
    php84 = ctx.php84.section(sec, results, NAME)
    sec.chart(ctx, "framework_rps.svg", "framework app: requests per second", "requests/s",
              report.rps_bars(results))
    base = BADOO_74[0][1]
    sec.add("For reference, Badoo's table (\"Trying preload (PHP 7.4) and RoadRunner\", PHP 7.4, a real application on their hardware; "
            "compare ratios, not absolute numbers):", "")
    sec.table(["Badoo's system", "RPS", "vs PHP 7.4"], [[n, v, f"{v / base:.2f}x"] for n, v in BADOO_74])
    sec.data = {"app": {k: v for k, v in app.items() if k != "paths"}, "paths": app["paths"],
                "results": httpbench.public(results), "ratios": ratios, "cpu_ratios": cpu_ratios,
                "start_errors": errors, "badoo_php74": dict(BADOO_74),
                **({"php84": php84} if php84 else {})}
    sec.summarize(ratios)
    return sec
