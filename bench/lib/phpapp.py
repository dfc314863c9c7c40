"""A real PHP framework app (php/symfony/tests/app, php/laravel/tests/app) on Ferry and on
nginx + php-fpm with and without preload: the preload list recorded from one request, the
checks that every system gives the same answer, and the report. Shared by the symfony and
laravel scenarios."""

import json
import os
import subprocess

from . import httpbench, method, report
from .proc import StartError, http_get
from .systems import check

APPS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "apps")
RECORDER = os.path.join(APPS, "symfony", "record.php")
PRELOADER = os.path.join(APPS, "symfony", "preload.php")

# Ferry's pool.php: the opcache settings php-fpm gets in lib/systems.NginxFpm (Ferry adds
# opcache.enable_cli=1 itself), with the JIT off on both sides.
FERRY_PHP = {"jit": "off", "ini": {"opcache.jit_buffer_size": "0", "opcache.validate_timestamps": "0"}}

RATIOS = [("Ferry / nginx+php-fpm", "ferry", "fpm"),
          ("Ferry direct / Ferry", "ferry-direct", "ferry"),
          ("Ferry / nginx+php-fpm+preload", "ferry", "fpm-preload"),
          ("php-fpm+preload / php-fpm", "fpm-preload", "fpm")]


def revision_ratios(ctx):
    """Ferry against each --ferry-rev built, for the scenarios that take revisions."""
    return [(f"Ferry / {r.label}", "ferry", r.key) for r in ctx.revisions.ready()]


def php_cli(app_dir, argv, env, timeout=120):
    """Runs `php argv` in app_dir with env added (the app's own CLI entry points); raises
    StartError with its output when it fails. Returns stdout."""
    full = dict(os.environ, **env)
    try:
        res = subprocess.run(["php"] + argv, cwd=app_dir, env=full, capture_output=True, text=True,
                             timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise StartError(f"php {' '.join(argv)}: {e}") from e
    if res.returncode != 0:
        raise StartError(f"php {' '.join(argv)} in {app_dir} exited {res.returncode}:\n"
                         f"{(res.stderr or res.stdout)[-2000:]}")
    return res.stdout


def record_preload(app_dir, front, path, env, autoload, out_dir):
    """Serves GET path through the app's front controller on the CLI (REQUEST_URI and
    SCRIPT_* set as php-fpm would), with bench/apps/symfony/record.php listing the classes
    the request declared, and writes the preload list for bench/apps/symfony/preload.php.
    It runs twice and the second run is recorded: the first also builds the app's caches
    (Symfony's container), which a steady-state request does not load. Returns (list
    path, number of classes, the second run's body)."""
    rec = os.path.join(out_dir, "recorded.json")
    req = {"REQUEST_URI": path, "REQUEST_METHOD": "GET", "QUERY_STRING": path.partition("?")[2],
           "SCRIPT_NAME": "/" + os.path.basename(front), "SCRIPT_FILENAME": front,
           "FERRY_BENCH_RECORD": rec}
    argv = ["-d", f"auto_prepend_file={RECORDER}", front]
    php_cli(app_dir, argv, dict(env, **req))
    body = php_cli(app_dir, argv, dict(env, **req))
    with open(rec) as f:
        recorded = json.load(f)
    listing = os.path.join(out_dir, "preload-list.json")
    with open(listing, "w") as f:
        json.dump({"autoload": [autoload], "classes": recorded["classes"], "recorded_from": path}, f, indent=1)
        f.write("\n")
    return listing, len(recorded["classes"]), body


class SameAnswers:
    """check(system) for start_all: each page answers the wanted status and content type,
    and the same body on every system (after normalize, for bodies that name the process
    or the port). headers() gives the request headers, e.g. a session cookie."""

    def __init__(self, pages, headers=None):
        self.pages = pages  # (path, status, content type prefix, normalize or None)
        self.headers = headers or (lambda: {})
        self.reference = {}

    def __call__(self, s):
        for path, status, ctype, normalize in self.pages:
            body = check(s, path, want_status=status, want_type=ctype, headers=self.headers())
            seen = normalize(body) if normalize else body
            ref = self.reference.setdefault(path, (s.label, seen))
            if ref[1] != seen:
                raise StartError(f"{s.label}: GET {path} differs from {ref[0]}'s answer:\n"
                                 f"  {seen!r:.400}\n  {ref[1]!r:.400}")


def json_without(*keys):
    """A normalize function: the JSON object without keys (a pid, a URL with the port)."""
    def normalize(body):
        try:
            doc = json.loads(body)
        except ValueError as e:
            raise StartError(f"not JSON: {body[:300]!r}") from e
        return {k: v for k, v in doc.items() if k not in keys}
    return normalize


def session_cookie(port, path, name):
    """The `name=value` pair of the session cookie a first visit to path gets."""
    status, hdrs, body = http_get(port, path)
    for part in hdrs.get("set-cookie", "").split(","):
        part = part.strip()
        if part.startswith(name + "="):
            return part.split(";", 1)[0]
    raise StartError(f"GET {path} set no {name} cookie (status {status}, headers {hdrs})")


def cookie_script(cookie):
    """A wrk script: every request carries one fixed Cookie header."""
    return f'wrk.headers["Cookie"] = {json.dumps(cookie)}\n'


def preload_outcome(system):
    """preload.php's line in php-fpm's log: how many recorded classes it preloaded."""
    try:
        with open(system._log("php-fpm"), errors="replace") as f:
            lines = [ln for ln in f if "preload.php:" in ln]
    except OSError:
        lines = []
    return lines[-1].split("preload.php:", 1)[1].strip() if lines else "no preload.php line in php-fpm's log"


def measure(ctx, sec, name, systems, checker, path, script=None, ratios=None):
    """Starts the systems, checks them, alternates wrk on path, and fills sec: the table,
    latency percentiles, CPU per request, paired ratios, charts and summary. Returns sec."""
    started, errors = httpbench.start_all(ctx, systems, checker)
    try:
        if not started:
            return sec.failed("no system started: " + "; ".join(errors.values()))
        for s in started:
            if getattr(s, "preload", None):
                sec.data.setdefault("preload", {})[s.key] = preload_outcome(s)
        results = httpbench.compare(ctx, started, path=path, script=script)
    finally:
        httpbench.stop_all(started)

    for key, line in sec.data.get("preload", {}).items():
        sec.add(f"{results[key]['label'] if key in results else key}: php-fpm logged `{line}`.", "")
    report.http_table(sec, results)
    if not any(r["iterations"] for r in results.values()):
        return sec.failed("no system completed a measurement: see the table")
    for key, err in errors.items():
        sec.add(f"- **{key} not measured**: {err}")
    ratios = httpbench.ratios(results, ratios or RATIOS, ctx.settings)
    report.ratio_table(sec, ratios)

    sec.add("### Latency percentiles", "", "wrk's latency distribution, median of each percentile over the "
            f"iterations used ({ctx.connections} connections).", "")
    rows = []
    for r in results.values():
        win = method.window_of(r["_state"], ctx.settings)
        if win:
            pcts = [method.summary([it.get(p) for it in win]) for p in ("p50_ms", "p75_ms", "p90_ms", "p99_ms")]
            rows.append([r["label"]] + [report.num(s["median"], 2) if s else "-" for s in pcts])
    sec.table(["system", "p50 ms", "p75 ms", "p90 ms", "p99 ms"], rows)

    sec.add("### CPU time per request", "",
            "User + system CPU time of each system's processes during each iteration (from /proc), divided by "
            "the requests served; wrk's own share is not counted. The front is Ferry's Go process, or nginx and "
            "the php-fpm master; the PHP processes are Ferry's workers or php-fpm's children. Steadier than "
            "requests per second on a shared machine.", "")
    report.cpu_table(sec, results)
    if "ferry-direct" in results:
        report.ratio_table(sec, httpbench.ratios(results, [("CPU per request, Ferry direct / Ferry", "ferry-direct", "ferry")],
                                                 ctx.settings, metric="cpu_us"))

    sec.chart(ctx, f"{name}_rps.svg", f"{name}: requests per second", "requests/s", report.rps_bars(results))
    sec.chart(ctx, f"{name}_p99.svg", f"{name}: p99 latency", "milliseconds",
              [{"label": r["label"], "value": r["p99_ms"]["median"], "lo": r["p99_ms"]["min"],
                "hi": r["p99_ms"]["max"]} for r in results.values() if r["p99_ms"]])
    cpu_bars = []
    for r in results.values():
        f, p = r.get("cpu_front_us"), r.get("cpu_php_us")
        if f and p:
            cpu_bars.append({"label": r["label"], "value": f["median"] + p["median"],
                             "lo": f["min"] + p["min"], "hi": f["max"] + p["max"]})
    sec.chart(ctx, f"{name}_cpu.svg", f"{name}: CPU time per request (front + PHP)", "microseconds", cpu_bars)

    sec.data.update({"results": httpbench.public(results), "ratios": ratios, "start_errors": errors})
    sec.summarize(ratios)
    cpu = {k: r["cpu_front_us"]["median"] + r["cpu_php_us"]["median"]
           for k, r in results.items() if r.get("cpu_front_us") and r.get("cpu_php_us")}
    if cpu:
        sec.summary.append("CPU us per request: " + ", ".join(f"{k} {v:.0f}" for k, v in cpu.items()))
    return sec
