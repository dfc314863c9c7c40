"""ext: hello with ext/ferry loaded and without, in alternated rounds (issue 16)."""

import os

from lib import httpbench, report
from lib.systems import Ferry, check

NAME = "ext"
TITLE = "hello with ext/ferry on and off"
BODY = b"Hello, world\n"


def run(ctx):
    sec = report.Section(NAME, TITLE)
    so = os.path.join(ctx.root, "ext", "ferry", ".build", "modules", "ferry.so")
    if not os.path.isfile(so):
        return sec.not_run(f"{so} is not built (ext/ferry/build.sh, needs php8.2-dev)")
    sec.add("The same `examples/hello/worker.php` twice, pool.php.extension set to the built ferry.so and to "
            "`off`; wrk alternates between the two every round, so both see the same machine load. The PHP "
            "column is what the issue's bar is about: PHP-side CPU per request with the extension at most half "
            "of pure PHP. `bench/ext-instructions.sh` counts the worker loop's instructions without syscalls.", "")
    worker = os.path.join(ctx.root, "examples", "hello", "worker.php")
    systems = [
        Ferry(ctx, "ext-on", "Ferry, ext/ferry loaded", worker, php={"extension": so}),
        Ferry(ctx, "ext-off", "Ferry, pure PHP", worker, php={"extension": "off"}),
    ]
    started, errors = httpbench.start_all(ctx, systems,
                                          lambda s: check(s, "/", want_body=BODY, want_type="text/plain"))
    try:
        if len(started) < 2:
            return sec.failed("not started: " + "; ".join(errors.values()))
        results = httpbench.compare(ctx, started)
    finally:
        httpbench.stop_all(started)
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
    sec.data = {"results": httpbench.public(results), "ratios": rps + php, "start_errors": errors}
    sec.summarize(rps + php)
    return sec
