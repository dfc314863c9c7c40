"""h2: one Ferry serving hello over HTTP/1.1 and HTTP/2, plain and TLS, loaded by one tool
(h2load, nghttp2-client) so that only the protocol changes between the rows."""

import re
import subprocess

from lib import method, report
from lib.httpbench import cpu_meter, cpu_summaries, start_all, stop_all
from lib.proc import free_port
from lib.systems import Ferry, check

NAME = "h2"
TITLE = "hello over HTTP/1.1 and HTTP/2, plain and TLS (h2load)"
COMPARES_REVISIONS = False
BODY = b"Hello, world\n"
# key, label, scheme, h2load flags
MODES = [
    ("h1", "HTTP/1.1 plain", "http", ["--h1"]),
    ("h1-tls", "HTTP/1.1 over TLS", "https", ["--h1"]),
    ("h2-tls", "HTTP/2 over TLS", "https", []),
    ("h2c", "HTTP/2 plain (h2c)", "http", []),
]
RATIOS = [
    ("HTTP/2 TLS / HTTP/1.1 TLS", "h2-tls", "h1-tls"),
    ("HTTP/1.1 TLS / HTTP/1.1 plain", "h1-tls", "h1"),
    ("h2c / HTTP/1.1 plain", "h2c", "h1"),
]


class H2LoadError(Exception):
    pass


def h2load(url, flags, duration, conns):
    argv = ["h2load", "-D", str(int(duration)), "-c", str(conns), "-t", "1", "-m", "1", *flags, url]
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 60)
    except FileNotFoundError as e:
        raise H2LoadError("h2load not installed (Debian: nghttp2-client; scripts/deps.sh installs it)") from e
    if res.returncode != 0:
        raise H2LoadError(f"h2load exited {res.returncode}: {' '.join(argv)}: {res.stderr.strip()[:200]}")
    return parse(res.stdout, " ".join(argv))


def parse(text, argv=""):
    done = re.search(r"requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded", text)
    rps = re.search(r"finished in [\d.]+m?s, ([\d.]+) req/s", text)
    codes = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", text)
    proto = re.search(r"Application protocol: (\S+)", text)
    if not (done and rps and codes):
        raise H2LoadError(f"unexpected h2load output: {text.strip()[:300]}")
    return {"requests": int(done.group(3)), "rps": float(rps.group(1)),
            "non2xx": sum(int(codes.group(i)) for i in (2, 3, 4)), "protocol": proto.group(1) if proto else "?",
            "argv": argv}


def run(ctx):
    sec = report.Section(NAME, TITLE)
    worker = ctx.root + "/examples/hello/worker.php"
    cert, key = ctx.path("h2-cert.pem"), ctx.path("h2-key.pem")
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                           "-nodes", "-subj", "/CN=127.0.0.1", "-days", "1", "-keyout", key, "-out", cert],
                          capture_output=True, text=True)
    if made.returncode != 0:
        return sec.failed("openssl could not make a test certificate: " + made.stderr.strip()[:200])
    tls_port = free_port()
    ferry = Ferry(ctx, "ferry", "Ferry hello", worker, admin=True, server=[
        "  tls:", f"    address: \"127.0.0.1:{tls_port}\"", f"    cert: \"{cert}\"", f"    key: \"{key}\"",
        "  http2:", "    h2c: true"])
    started, errors = start_all(ctx, [ferry], lambda s: check(s, "/", want_body=BODY, want_type="text/plain"))
    if not started:
        return sec.failed("Ferry did not start: " + "; ".join(errors.values()))
    sec.add(f"One Ferry (`examples/hello/worker.php`, {ctx.workers} workers) with `server.tls` and "
            "`server.http2.h2c` on; h2load (one thread, one stream per connection, "
            f"{ctx.connections} connections) for every row, so only the protocol differs. CPU per request "
            "is the server's (front) and its PHP workers', from /proc.", "")
    urls = {k: (f"https://127.0.0.1:{tls_port}/" if scheme == "https" else ferry.url + "/", flags)
            for k, _, scheme, flags in MODES}
    try:
        def measure(k):
            dead = ferry.health()
            if dead:
                raise H2LoadError(dead)
            cpu = cpu_meter(ferry)
            url, flags = urls[k]
            res = h2load(url, flags, ctx.settings.duration, ctx.connections)
            if res["non2xx"] or not res["requests"]:
                raise H2LoadError(f"{res['non2xx']} non-2xx of {res['requests']} ({res['argv']})")
            return cpu(res)

        state = method.alternate([m[0] for m in MODES], measure, ctx.settings, "rps", ctx.progress)
    finally:
        stop_all(started)
    labels = {k: label for k, label, _, _ in MODES}
    results = {}
    for k, st in state.items():
        if st["error"]:
            ctx.fail(f"h2 {k}: {st['error']}")
        win = method.window_of(st, ctx.settings)
        results[k] = {
            "label": labels[k], "settled": st["settled"], "error": st["error"], "quick": ctx.settings.quick,
            "iterations": st["iterations"], "rounds": st["rounds"], "window": len(win),
            "protocol": win[0]["protocol"] if win else None,
            "rps": method.summary([r["rps"] for r in win]),
            **cpu_summaries(win),
            "_state": st,
        }
    rows = [[r["label"], r["protocol"] or "-", f"{report.num(r['rps']['median'])} ({report.spread_cell(r['rps'])})" if r["rps"] else "-",
             report.settled_cell(r)] for r in results.values()]
    sec.table(["mode", "negotiated", "req/s median (min .. max)", "settled"], rows)
    report.cpu_table(sec, results)
    ratios = []
    for label, a, b in RATIOS:
        ra, rb = results[a], results[b]
        r = method.paired_ratios(ra["_state"], rb["_state"], "rps", ctx.settings) \
            if ra["iterations"] and rb["iterations"] else None
        ratios.append({"label": label, "a": a, "b": b, "ratio": r, "reason": None if r else "one side did not run"})
    report.ratio_table(sec, ratios)
    sec.chart(ctx, "h2_rps.svg", "hello by protocol", "requests/s", report.rps_bars(results))
    sec.data = {"results": {k: {kk: vv for kk, vv in v.items() if not kk.startswith("_")} for k, v in results.items()},
                "ratios": ratios}
    sec.summarize(ratios)
    return sec
