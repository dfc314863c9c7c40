"""memory: RSS, PSS and USS of each system's whole process tree after load (issue 33), Ferry
with pool.boot: fork and exec next to nginx + php-fpm, on hello, the framework-like app,
Laravel and Symfony; and their req/s under the same short load."""

import time

from lib import apps, httpbench, report, smaps, wrk
from lib.proc import StartError

NAME = "memory"
TITLE = "memory per system after load (RSS, PSS, USS of whole process trees): Ferry fork / exec vs nginx + php-fpm"
DEFAULT_WORKERS = 4  # issue 33's figures are for 4 PHP processes per system
# A refork after this many requests happens early in each load, and the workers then
# replaced from the warm mold serve the rest of it.
REFORK_AFTER = 1000
SYSTEMS = (("fork", "Ferry, boot: fork"), ("exec", "Ferry, boot: exec"), ("fpm", "nginx + php-fpm"),
           ("refork", f"Ferry, fork + refork_after: {REFORK_AFTER}"))


def systems(ctx, app, workers):
    return [app.ferry_system(ctx, "fork", SYSTEMS[0][1], workers),
            app.ferry_system(ctx, "exec", SYSTEMS[1][1], workers),
            app.fpm_system(ctx, SYSTEMS[2][1], workers),
            app.ferry_system(ctx, "fork", SYSTEMS[3][1], workers, suffix="refork",
                             pool={"refork_after": REFORK_AFTER})]


def settle(s, workers, seconds=10.0):
    """Waits until s runs `workers` workers again: with refork_after the load may end while
    the workers are being replaced from the new mold, one retiring as its successor starts,
    and a reading then would count a worker too few or too many."""
    deadline = time.monotonic() + seconds
    while len(s.worker_pids()) != workers and time.monotonic() < deadline:
        time.sleep(0.05)


def alone(ctx, app, s):
    """Starts s with nothing else of this scenario running, loads it for --duration seconds
    and reads its process tree. Alone, because PSS splits a page between every process
    that maps it, whichever system it belongs to: Ferry fork and exec map the same PHP
    binary and extensions, so beside each other each would be charged only part of them."""
    s.start()
    try:
        app.check(s)
        # Before the load, after the check's few requests: what a worker holds as it starts,
        # so that what the load adds (pages a request dirties, lazy services) stands apart.
        before = smaps.measure(s)
        res = wrk.run(s.url + app.path, ctx.settings.duration, ctx.connections, ctx.threads, script=app.script)
        if res["non2xx"] or not res["requests"]:
            raise StartError(f"{s.label}: {res['non2xx']} non-2xx answers, {res['requests']} requests under load")
        dead = s.health()
        if dead:
            raise StartError(dead)
        settle(s, before["workers"])
        return {"memory": smaps.measure(s), "before_load": before, "rps": res["rps"], "requests": res["requests"]}
    finally:
        s.stop()


def mib(kib):
    return "-" if kib is None else f"{kib / 1024:.1f}"


def ratio(a, b):
    return f"{a / b:.2f}x" if a is not None and b else "-"


def role_pss(mem, *roles):
    found = [mem["roles"][r] for r in roles if r in mem["roles"]]
    return sum(r["pss"] for r in found) if found else None


def table(sec, app, measured, side, results):
    fpm = measured.get(f"{app.name}-fpm", {}).get("memory", {}).get("total", {})
    rows = []
    for suffix, label in SYSTEMS:
        key = f"{app.name}-{suffix}"
        m = measured.get(key)
        if not m:
            rows.append([label] + ["-"] * 16)
            continue
        mem, t, w = m["memory"], m["memory"]["total"], m["memory"]["per_worker"] or {}
        w0 = m["before_load"]["per_worker"] or {}
        rows.append([label, f"{len(mem['processes'])} ({mem['workers']} workers)", mib(t["rss"]), mib(t["pss"]),
                     mib(t["uss"]), ratio(t["pss"], fpm.get("pss")), ratio(t["uss"], fpm.get("uss")),
                     ratio(t["rss"], fpm.get("rss")), mib(w.get("rss")), mib(w.get("pss")), mib(w.get("uss")),
                     mib(w0.get("uss")),
                     mib(role_pss(mem, "ferry", "nginx")), mib(role_pss(mem, "zygote", "fpm master")),
                     mib(side[key]["total"]["pss"]) if key in side else "-", rps_cell(results.get(key)),
                     report.cpu_cell(results[key]) if key in results else "-"])
    sec.table(["system", "processes", "RSS MiB", "PSS MiB", "USS MiB", "PSS / FPM", "USS / FPM", "RSS / FPM",
               "RSS per worker", "PSS per worker", "USS per worker", "USS per worker before load", "front PSS",
               "zygote / fpm master PSS",
               "PSS side by side", "req/s (alternated)", "CPU us/request (front + PHP)"], rows)


def rps_cell(r):
    return report.num(r["rps"]["median"]) if r and r.get("rps") else "-"


def measure_app(ctx, sec, app, workers):
    started, errors = httpbench.start_all(ctx, systems(ctx, app, workers), app.check)
    try:
        results = httpbench.compare(ctx, started, path=app.path, script=app.script) if started else {}
        side = {s.key: smaps.measure(s) for s in started}
    finally:
        httpbench.stop_all(started)
    measured = {}
    for s in started:
        ctx.progress(f"{s.label}: alone for the memory reading")
        try:
            measured[s.key] = alone(ctx, app, s)
        except (StartError, OSError, wrk.WrkError) as e:
            ctx.fail(f"{app.name}: {s.label}: memory reading failed: {e}")
    sec.add(f"### {app.name}: {app.title}", "")
    table(sec, app, measured, side, results)
    for key, err in errors.items():
        sec.add(f"- **{key} not measured**: {err}")
    pairs = [(f"{app.name}: req/s, Ferry fork / Ferry exec", f"{app.name}-fork", f"{app.name}-exec"),
             (f"{app.name}: req/s, Ferry fork / nginx+php-fpm", f"{app.name}-fork", f"{app.name}-fpm")]
    ratios = httpbench.ratios(results, pairs, ctx.settings)
    report.ratio_table(sec, ratios)
    return {"measured": measured, "side_by_side": side, "results": httpbench.public(results), "ratios": ratios,
            "start_errors": errors}


def summary_lines(name, d):
    m = d["measured"]
    fpm = m.get(f"{name}-fpm", {}).get("memory", {}).get("total", {}).get("pss")
    out = []
    for suffix in ("fork", "exec", "refork"):
        t = m.get(f"{name}-{suffix}", {}).get("memory", {}).get("total")
        if t and fpm:
            out.append(f"{name}: total PSS Ferry {suffix} {t['pss'] / 1024:.1f} MiB, {t['pss'] / fpm:.2f}x nginx+FPM's "
                       f"{fpm / 1024:.1f}")
    fork = m.get(f"{name}-fork", {}).get("memory", {}).get("total")
    if fork and fpm:
        out.append(f"{name}: goal total PSS Ferry fork <= nginx+FPM's: {'met' if fork['pss'] <= fpm else 'not met'}")
    for r in d["ratios"][:1]:
        if r.get("ratio"):
            x = r["ratio"]
            out.append(f"{r['label']}: {x['median']:.2f}x ({x['min']:.2f} .. {x['max']:.2f})")
    return out


def run(ctx):
    sec = report.Section(NAME, TITLE)
    workers = ctx.workers if ctx.workers_given else DEFAULT_WORKERS
    sec.add(f"Each app on three systems with {workers} PHP processes each (`--workers`, default {DEFAULT_WORKERS} "
            "here): Ferry with `pool.boot: fork` (ferry → zygote → workers), Ferry with `pool.boot: exec` (every "
            f"worker its own `php`), Ferry with `pool.boot: fork` and `pool.refork_after: {REFORK_AFTER}` (a warm worker "
            "becomes the mold early in the load and the workers are replaced from it), and nginx + php-fpm (`pm = static`, opcache on, `validate_timestamps=0`, JIT off,"
            " as in the other scenarios; Ferry gets the same opcache settings). First the three are started side by "
            "side and loaded by wrk in alternation for req/s (one run of `--duration` seconds each is enough to show "
            "that fork loses no req/s against exec; on a shared machine the figures are indicative). Then each is "
            "started again **alone**, loaded for `--duration` seconds (so lazily loaded code is compiled and pages "
            "touched) and its whole process tree read from `/proc/<pid>/smaps_rollup`: Ferry's front, zygote and "
            "workers; nginx's master and workers, php-fpm's master and children. Alone, because PSS shares a page out"
            " among every process that maps it, whichever system it belongs to: the *PSS side by side* column is the "
            "same reading taken while the three ran together, where each is charged less.", "",
            "Columns: **RSS** resident pages (shared ones counted in every process), **PSS** proportional set size "
            "(each shared page divided among the processes mapping it: the sum is the system's share of the memory in"
            " use), **USS** Private_Clean + Private_Dirty (what the processes alone hold; freed if they exit), summed"
            " over every process of the system, in MiB; ratios against nginx + php-fpm's sums; *per worker*: the mean"
            " over the PHP processes that serve requests (Ferry's workers, php-fpm's children), and its USS right "
            "after the start (after the few requests of the check, before the load): the difference is what the load "
            "dirtied; *front PSS*: Ferry's Go process, or nginx's master and workers; *zygote / fpm master*: the PHP "
            "process the workers were forked from (none with `exec`).", "")
    data, bars = {}, []
    for name in apps.NAMES:
        ctx.progress(f"{name}: setting up")
        try:
            app = apps.build(ctx, name)
        except (StartError, OSError) as e:
            ctx.fail(f"{name}: setting up the app failed: {e}")
            sec.add(f"### {name}", "", f"**failed**: setting up the app: {e}", "")
            continue
        if isinstance(app, str):
            sec.add(f"### {name}", "", f"**not run**: {app}", "")
            continue
        d = data[name] = measure_app(ctx, sec, app, workers)
        for suffix, label in SYSTEMS:
            m = d["measured"].get(f"{name}-{suffix}")
            if m:
                bars.append({"label": label, "value": m["memory"]["total"]["pss"] / 1024, "group": name})
        sec.summary += summary_lines(name, d)
    if not bars:
        return sec.failed("no system was measured")
    sec.chart(ctx, "memory_pss.svg", f"total PSS per system, {workers} PHP processes each, after load", "MiB", bars,
              note="whole process trees, each system measured alone")
    sec.data = {"workers": workers, "apps": data}
    return sec
