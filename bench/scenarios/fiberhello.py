"""fiberhello: what Fiber mode costs on the smallest request (issue 20): hello on Ferry with
sequential workers and with pool.fibers, and with --ferry-rev, that revision in Fiber mode."""

import os

from lib import httpbench, report
from lib.systems import Ferry

from . import hello

NAME = "fiberhello"
TITLE = "hello in Fiber mode vs sequential workers (CPU per request)"
COMPARES_REVISIONS = True


def run(ctx):
    sec = report.Section(NAME, TITLE)
    sec.add("`examples/hello/worker.php` on Ferry three ways: sequential workers (the default, pipeline 32), "
            "the same workers in Fiber mode (`pool.fibers: true`, max_concurrency 64), and with `--ferry-rev` "
            "each given revision in Fiber mode, with that revision's own SDK. Hello never waits, so Fiber mode "
            "can only cost here: what it costs per request is the figure (CPU time of the front and the PHP "
            "workers, from /proc, paired per round).", "")
    worker = os.path.join(ctx.root, "examples", "hello", "worker.php")
    revs = ctx.revisions.ready()
    systems = [Ferry(ctx, "sequential", "Ferry, sequential workers", worker),
               Ferry(ctx, "fibers", "Ferry, Fiber mode", worker, fibers=True)]
    systems += [Ferry(ctx, r.key, f"{r.label}, Fiber mode", r.path("examples", "hello", "worker.php"), revision=r,
                      fibers=True) for r in revs]
    results, errors = httpbench.compare_pair(ctx, systems, hello.check_hello)
    if results is None:
        return sec.failed("not enough systems started: " + "; ".join(errors.values()))
    report.http_table(sec, results)
    report.cpu_table(sec, results)
    pairs = [("Fiber mode / sequential", "fibers", "sequential")]
    pairs += [(f"Fiber mode / {r.label} Fiber mode", "fibers", r.key) for r in revs]
    pairs += [(f"{r.label} Fiber mode / sequential", r.key, "sequential") for r in revs]
    rows, data = [], {}
    for label, a, b in pairs:
        if a not in results or b not in results:
            continue
        ratio, _, _ = httpbench.cpu_pairs(results, a, b)
        php, _, _ = httpbench.cpu_pairs(results, a, b, ("cpu_php_us",))
        if ratio:
            rows.append([label, httpbench.cpu_ratio_cell(ratio), httpbench.cpu_ratio_cell(php), str(ratio["n"])])
            sec.summary.append(f"{label}: CPU per request {ratio['median']:.3f}x ({ratio['min']:.3f} .. "
                               f"{ratio['max']:.3f}); PHP alone {php['median']:.3f}x")
            data[label] = {"cpu_ratio": ratio, "php_ratio": php}
    for key, err in errors.items():
        sec.add(f"- **{key} not measured**: {err}")
    sec.add("### CPU time per request, paired per round", "")
    sec.table(["ratio", "front + PHP", "PHP alone", "rounds"], rows)
    sec.data = {"results": httpbench.public(results), "ratios": data, "start_errors": errors}
    return sec
