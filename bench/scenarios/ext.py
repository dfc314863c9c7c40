"""ext: hello with ext/ferry loaded and without, in alternated rounds (issue 16)."""

import os

from lib import httpbench, report
from lib.systems import Ferry, check, ext_so

from . import framework

NAME = "ext"
TITLE = "hello and the framework app with ext/ferry on and off"
BODY = b"Hello, world\n"


def run(ctx):
    sec = report.Section(NAME, TITLE)
    so = ext_so(ctx.root)
    if not os.path.isfile(so):
        return sec.not_run(f"{so} is not built (ext/ferry/build.sh, needs php8.2-dev)")
    sec.add("The same `examples/hello/worker.php` twice, pool.php.extension set to the built ferry.so and to "
            "`off`; wrk alternates between the two every round, so both see the same machine load. The PHP "
            "column is what the issue's bar is about: PHP-side CPU per request with the extension at most half "
            "of pure PHP. With the extension a sequential HttpWorker runs its loop in C (`Ferry\\Ext\\http_serve()`); "
            "`bench/ext-instructions.sh` counts the worker loop's instructions without syscalls.", "")
    worker = os.path.join(ctx.root, "examples", "hello", "worker.php")
    systems = [
        Ferry(ctx, "ext-on", "Ferry, ext/ferry loaded", worker, php={"extension": so}),
        Ferry(ctx, "ext-off", "Ferry, pure PHP", worker, php={"extension": "off"}),
    ]
    results, errors = httpbench.compare_pair(ctx, systems, lambda s: check(s, "/", want_body=BODY, want_type="text/plain"))
    if results is None:
        return sec.failed("not started: " + "; ".join(errors.values()))
    report.http_table(sec, results)
    if not all(r["iterations"] for r in results.values()):
        return sec.failed("a system completed no measurement: see the table")
    sec.add("### CPU time per request", "")
    report.cpu_table(sec, results)
    pair = [("ext/ferry on / off", "ext-on", "ext-off")]
    rps = httpbench.ratios(results, pair, ctx.settings)
    php = httpbench.ratios(results, [("PHP CPU per request, on / off", "ext-on", "ext-off")], ctx.settings,
                           metric="cpu_php_us")
    sec.add("### Paired ratios: requests per second, then PHP CPU per request", "")
    report.ratio_table(sec, rps + php)
    fw = framework_part(ctx, sec, so)
    sec.data = {"results": httpbench.public(results), "ratios": rps + php + fw, "start_errors": errors}
    sec.summarize(rps + php + fw)
    return sec


def framework_part(ctx, sec, so):
    """The same pair on the framework scenario's generated app (its worker, pages and paths.lua)."""
    app = framework.generate(ctx, "ext-framework-app")
    systems = [
        Ferry(ctx, "fw-on", "framework app, ext/ferry loaded", app["worker"], php={"extension": so}),
        Ferry(ctx, "fw-off", "framework app, pure PHP", app["worker"], php={"extension": "off"}),
    ]
    results, errors = httpbench.compare_pair(ctx, systems, lambda s: check(s, "/", want_type="text/html"),
                                             script=app["lua"])
    if results is None:
        sec.add("- framework part not run: " + "; ".join(errors.values()))
        return []
    sec.add("### The framework app", "",
            "`bench/apps/framework` as the framework scenario generates it, wrk walking its `paths.lua`.", "")
    report.http_table(sec, results)
    report.cpu_table(sec, results)
    ratios = httpbench.ratios(results, [("framework: ext/ferry on / off", "fw-on", "fw-off")], ctx.settings)
    ratios += httpbench.ratios(results, [("framework: PHP CPU per request, on / off", "fw-on", "fw-off")],
                               ctx.settings, metric="cpu_php_us")
    report.ratio_table(sec, ratios)
    return ratios
