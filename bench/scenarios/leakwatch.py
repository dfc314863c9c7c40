"""leakwatch: what pool.leak_watch costs, on hello and on the framework app, off against on."""

import os

from lib import httpbench, report
from lib.systems import Ferry, check

from . import framework, hello

NAME = "leakwatch"
TITLE = "leak watch overhead: hello and the framework app, mode off vs on"
EVERY = 250  # pool.leak_watch_every's default
# What `pool.leak_watch: true` hands the workers (cmd/ferry/options.go); set through pool.env
# so that the two systems' configs differ in nothing else.
ON = {"FERRY_LEAK_WATCH": "1", "FERRY_LEAK_WATCH_EVERY": str(EVERY), "FERRY_LEAK_WATCH_WARMUP": "10"}


def run(ctx):
    sec = report.Section(NAME, TITLE)
    sec.add(f"The same Ferry and app twice, the leak watch off and on (`pool.leak_watch: true`, every {EVERY} "
            "requests, the default), loaded in alternated rounds. The figure that matters is CPU time per "
            "request (front + PHP workers, from /proc), paired per round: on / off.", "")
    app = framework.generate(ctx, "leakwatch-framework-app")
    hello_worker = os.path.join(ctx.root, "examples", "hello", "worker.php")
    groups = [
        ("hello", "/", None, [Ferry(ctx, "hello-off", "hello, leak watch off", hello_worker),
                              Ferry(ctx, "hello-on", "hello, leak watch on", hello_worker, env=ON)],
         hello.check_hello),
        ("framework", "/", app["lua"], [Ferry(ctx, "framework-off", "framework, leak watch off", app["worker"]),
                                        Ferry(ctx, "framework-on", "framework, leak watch on", app["worker"], env=ON)],
         lambda s: check(s, "/", want_type="text/html")),
    ]
    rows, data = [], {}
    for name, path, script, systems, checker in groups:
        results, errors = httpbench.compare_pair(ctx, systems, checker, path=path, script=script)
        if results is None:
            sec.add(f"- **{name} not measured**: " + "; ".join(errors.values()))
            continue
        report.http_table(sec, results)
        report.cpu_table(sec, results)
        ratio, on, off = httpbench.cpu_pairs(results, f"{name}-on", f"{name}-off")
        # The watch runs in the workers: their share alone is less diluted by the front's noise.
        php_ratio, php_on, php_off = httpbench.cpu_pairs(results, f"{name}-on", f"{name}-off", ("cpu_php_us",))
        if ratio:
            rows.append([name, f"{off['median']:.1f}", f"{on['median']:.1f}", httpbench.cpu_ratio_cell(ratio),
                         f"{php_off['median']:.1f}", f"{php_on['median']:.1f}", httpbench.cpu_ratio_cell(php_ratio),
                         str(ratio["n"])])
            sec.summary.append(f"{name}: CPU per request on/off {ratio['median']:.3f}x "
                               f"({ratio['min']:.3f} .. {ratio['max']:.3f}); PHP alone {php_ratio['median']:.3f}x "
                               f"({php_ratio['min']:.3f} .. {php_ratio['max']:.3f})")
        data[name] = {"results": httpbench.public(results), "cpu_ratio": ratio, "cpu_on_us": on, "cpu_off_us": off,
                      "php_ratio": php_ratio, "php_on_us": php_on, "php_off_us": php_off}
    if not rows:
        return sec.failed("nothing measured")
    sec.add("### CPU time per request, leak watch on / off", "")
    sec.table(["app", "off us", "on us", "on / off (paired per round)", "PHP off us", "PHP on us",
               "PHP on / off", "rounds"], rows)
    sec.add("", "us: CPU time per request, median over the rounds; ratios: median (min .. max) of the per-round ratios.")
    sec.data = data
    return sec
