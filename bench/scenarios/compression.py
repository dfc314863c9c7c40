"""compression: what on-the-fly compression (server.compression) costs per request, on a
12 KB HTML page, for each algorithm against compression off."""

import os

from lib import httpbench, report
from lib.proc import http_get
from lib.systems import Ferry, check

NAME = "compression"
TITLE = "a 12 KB HTML page with server.compression off and with gzip, zstd, br"
COMPARES_REVISIONS = False
ACCEPT = "gzip, br, zstd"
ALGOS = ["gzip", "zstd", "br"]


def lua(ctx):
    path = ctx.path("compression", "accept.lua")
    with open(path, "w") as f:
        f.write(f'wrk.headers["Accept-Encoding"] = "{ACCEPT}"\n')
    return path


def systems(ctx):
    worker = os.path.join(ctx.root, "bench", "apps", "compression", "worker.php")
    out = [Ferry(ctx, "off", "compression off", worker)]
    for a in ALGOS:
        out.append(Ferry(ctx, a, f"compression {a}", worker, server=[
            "  compression:", "    enabled: true", f"    algorithms: [{a}]"]))
    return out


def check_page(s):
    body = check(s, "/", want_type="text/html", headers={"Accept-Encoding": ACCEPT})
    status, hdrs, _ = http_get(s.port, "/", headers={"Accept-Encoding": ACCEPT})
    enc = hdrs.get("content-encoding", "")
    if (s.key == "off") != (enc == ""):
        raise OSError(f"{s.label}: Content-Encoding {enc!r}")
    if s.key != "off" and enc != s.key:
        raise OSError(f"{s.label}: Content-Encoding {enc!r}, want {s.key}")
    s.body_bytes = len(body)


def run(ctx):
    sec = report.Section(NAME, TITLE)
    sec.add("`bench/apps/compression/worker.php` answers the same 12 KB HTML page; four Ferrys differ only in "
            f"`server.compression` (off, or on with one algorithm at Ferry's level). wrk sends "
            f"`Accept-Encoding: {ACCEPT}`. CPU per request is the front's (where compression runs) and "
            "the PHP workers'.", "")
    started, errors = httpbench.start_all(ctx, systems(ctx), check_page)
    try:
        if not started:
            return sec.failed("no system started: " + "; ".join(errors.values()))
        results = httpbench.compare(ctx, started, script=lua(ctx))
    finally:
        httpbench.stop_all(started)
    report.http_table(sec, results)
    sec.table(["system", "bytes on the wire"], [[s.label, f"{s.body_bytes:,}"] for s in started])
    report.cpu_table(sec, results)
    ratios = httpbench.ratios(results, [(f"{a} / off", a, "off") for a in ALGOS], ctx.settings)
    report.ratio_table(sec, ratios)
    extra = []
    off = results.get("off", {}).get("cpu_front_us")
    for a in ALGOS:
        r = results.get(a, {}).get("cpu_front_us")
        if off and r:
            extra.append(f"{a} +{r['median'] - off['median']:.1f} us of front CPU per request")
    if extra:
        sec.add("Front CPU added by compressing: " + ", ".join(extra) + ".", "")
    sec.chart(ctx, "compression_rps.svg", "12 KB page by compression", "requests/s", report.rps_bars(results))
    sec.data = {"results": httpbench.public(results), "ratios": ratios, "start_errors": errors,
                "bytes": {s.key: s.body_bytes for s in started}}
    sec.summarize(ratios)
    sec.summary += extra
    return sec
