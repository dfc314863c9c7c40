"""fiberio (issue 35): an unmodified blocking client under pool.fiber_io, side by side with the
same client on sequential workers and with Ferry's own async connector; and a PDO MySQL page
that waits on its database, on Ferry with and without the hooks and on nginx + php-fpm.

Tarantool and MariaDB are started here on free ports (throwaway data directories) and stopped
by pid; their CPU per request is measured apart from the systems' own (backend_pids)."""

import os
import shutil
import socket
import time

from lib import httpbench, perfcount, report
from lib.proc import Proc, StartError, free_port
from lib.systems import IS_ROOT, Ferry, NginxFpm, check, ext_so

NAME = "fiberio"
TITLE = "Fiber-aware I/O: a blocking client, sync vs hooked Fibers vs async; PDO MySQL vs nginx + FPM"

WAIT = 0.02       # seconds each request waits in the database: I/O-bound, 100 req/s per 2 sync workers
WORKERS = 2
LEVELS = (25, 50, 100)   # pool.max_concurrency of the Fiber systems
QUICK_LEVELS = (50,)
PDO_FIBERS = 50
# Enough connections to fill every Fiber system: 2 workers x the highest level. The sync
# systems queue the rest (about connections x WAIT / 2 s each), so wrk waits 10 s, not 2.
WRK_TIMEOUT = 10
GOAL_SYNC, GOAL_ASYNC = 5.0, 1.5


class Missing(Exception):
    """A database binary is not installed: that part is not run, which is not a failure."""


def need(binary):
    if not shutil.which(binary):
        raise Missing(f"{binary} is not installed (scripts/deps.sh)")


def wait_listen(proc, port, what, timeout=30):
    """Both servers listen only once they are ready to serve, so a TCP connect is the probe."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not proc.alive():
            raise StartError(f"{what} exited during start; see {proc.log_path}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    proc.stop()
    raise StartError(f"{what} did not listen within {timeout} s; see {proc.log_path}")


def start_tarantool(ctx):
    need("tarantool")
    port = free_port()
    data = ctx.dir(NAME, "tarantool")
    env = dict(os.environ, FIBERIO_LISTEN=f"127.0.0.1:{port}", FIBERIO_DIR=data)
    proc = Proc("tarantool", ["tarantool", os.path.join(ctx.root, "bench", "apps", "fiberio", "init.lua")],
                   os.path.join(data, "tarantool.log"), cwd=data, env=env).start()
    wait_listen(proc, port, "tarantool")
    return proc, port


def start_mariadb(ctx):
    """mariadbd on a fresh data directory, without grant tables (root, no password), as
    cmd/ferry/fiberio_mysql_e2e_test.go runs it; max_connections above every Fiber in flight."""
    need("mariadbd")
    port = free_port()
    d = ctx.dir(NAME, "mariadb")
    os.makedirs(os.path.join(d, "data"), exist_ok=True)
    argv = ["mariadbd", "--no-defaults", f"--datadir={d}/data", f"--socket={ctx.sock('fiberio-mariadb.sock')}",
            f"--port={port}", "--bind-address=127.0.0.1", "--skip-grant-tables", "--innodb-buffer-pool-size=16M",
            "--skip-log-bin", "--max-connections=2000", f"--pid-file={d}/mariadbd.pid"]
    if IS_ROOT:
        argv.append("--user=root")
    proc = Proc("mariadbd", argv, os.path.join(d, "mariadbd.log"), cwd=d).start()
    wait_listen(proc, port, "mariadbd", timeout=60)
    return proc, port


def with_backend(system, backend):
    system.backend_pids = lambda: [backend.pid] if backend.alive() else []
    return system


def fiber_ferry(ctx, key, label, worker, env, level, hooked):
    s = Ferry(ctx, key, label, worker, env=env, workers=WORKERS)
    # pool_extra, not fibers=True: that one fixes max_concurrency at 64.
    s.pool_extra = {"fibers": "true", "max_concurrency": level, "fiber_io": "true" if hooked else "false"}
    return s


def checker(prefix):
    def run(system):
        body = check(system, "/", want_type="text/plain")
        if not body.startswith(prefix.encode()):
            raise StartError(f"{system.label}: GET / answered {body[:200]!r}, want {prefix!r}...")
    return run


def tarantool_systems(ctx, worker, port, levels):
    def env(client):
        return {"FIBERIO_CLIENT": client, "FIBERIO_TARANTOOL": f"tcp://127.0.0.1:{port}", "FIBERIO_WAIT": WAIT}
    out = [Ferry(ctx, "sync", "blocking client, sequential workers", worker, env=env("sync"), workers=WORKERS,
                 pipeline=1)]
    out += [fiber_ferry(ctx, f"hooked-{n}", f"blocking client, Fibers + fiber_io, {n}/worker", worker, env("sync"),
                        n, True) for n in levels]
    out += [fiber_ferry(ctx, f"async-{n}", f"Ferry async connector, Fibers, {n}/worker", worker, env("async"),
                        n, False) for n in levels]
    return out


def pdo_systems(ctx, worker, port):
    env = {"FIBERIO_CLIENT": "pdo", "FIBERIO_MYSQL_PORT": port, "FIBERIO_WAIT": WAIT}
    index = os.path.join(ctx.root, "bench", "apps", "fiberio", "index.php")
    return [fiber_ferry(ctx, "pdo-hooked", f"Ferry, Fibers + fiber_io, {PDO_FIBERS}/worker", worker, env,
                        PDO_FIBERS, True),
            Ferry(ctx, "pdo-sequential", "Ferry, sequential workers", worker, env=env, workers=WORKERS, pipeline=1),
            NginxFpm(ctx, "pdo-fpm", f"nginx + php-fpm (static, {WORKERS} children)", index, workers=WORKERS,
                     env={k: str(v) for k, v in env.items()})]


def measure(ctx, systems, backend, check_fn, connections, profile=()):
    """Alternated rounds, then (not in quick mode, with perf) one more load of each system in
    profile while perf counts its PHP processes' and the backend's syscalls by name."""
    for s in systems:
        with_backend(s, backend)
    started, errors = httpbench.start_all(ctx, systems, check_fn)
    try:
        if len(started) < 2:
            return None, errors, {}
        results = httpbench.compare(ctx, started, connections=connections, timeout_s=WRK_TIMEOUT)
        counts = {}
        if profile and not ctx.settings.quick and perfcount.available():
            for s in started:
                if s.key in profile and not s.health():
                    ctx.progress(f"counting syscalls of {s.label}")
                    counts[s.key] = perfcount.count(s.url, {"php": s.cpu_pids()[1], "backend": [backend.pid]},
                                                    ctx.settings.duration, connections, ctx.threads,
                                                    timeout_s=WRK_TIMEOUT)
        return results, errors, counts
    finally:
        httpbench.stop_all(started)


def syscall_table(sec, results, counts, backend_name):
    """Where a request's time goes: per request, the PHP workers' CPU split user/kernel, their
    syscalls by name and context switches, and the backend's CPU and syscalls."""
    if not counts:
        return
    names = [n for n in perfcount.SYSCALLS if any(c.get("php", {}).get(n, 0) >= 0.05 for c in counts.values())]
    rows = []
    for key, c in counts.items():
        php, be = c.get("php", {}), c.get("backend", {})
        rows.append([results[key]["label"], f"{c['rps']:,.0f}", f"{php.get('user_us', 0):.1f}",
                     f"{php.get('sys_us', 0):.1f}", f"{php.get('syscalls', 0):.2f}",
                     f"{php.get('context-switches', 0):.2f}", *(f"{php.get(n, 0):.2f}" for n in names),
                     f"{be.get('user_us', 0) + be.get('sys_us', 0):.1f}", f"{be.get('syscalls', 0):.2f}"])
    sec.add("Where the time goes: one more load of each system below while `perf stat` counts "
            "the PHP workers' syscalls by name (per request), and /proc their CPU split into user and kernel time; "
            f"last two columns: {backend_name}'s CPU and syscalls per request.", "")
    sec.table(["system", "req/s", "PHP user us", "PHP kernel us", "PHP syscalls", "ctx switches",
               *names, f"{backend_name} CPU us", f"{backend_name} syscalls"], rows)


def cpu_rows(results, backend_name):
    rows = []
    for r in results.values():
        f, p, b = (r.get(k) for k in ("cpu_front_us", "cpu_php_us", "cpu_backend_us"))
        if not f or not p:
            continue
        rows.append([r["label"], f"{f['median']:.1f}", f"{p['median']:.1f}", f"{f['median'] + p['median']:.1f}",
                     f"{b['median']:.1f}" if b else "-"])
    return ["system", "front us", "PHP us", "front + PHP us", f"{backend_name} us"], rows


def cpu_bars(results):
    return [{"label": r["label"], "value": r["cpu_us"]["median"], "lo": r["cpu_us"]["min"], "hi": r["cpu_us"]["max"]}
            for r in results.values() if r.get("cpu_us")]


def part(ctx, sec, results, errors, pairs, backend_name, slug, title, counts=None):
    for key, err in errors.items():
        sec.add(f"- **{key} not measured**: {err}")
    if results is None:
        sec.add("Fewer than two systems started: nothing to compare.", "")
        return []
    report.http_table(sec, results)
    sec.add(f"CPU time per request, median over the iterations used; {backend_name}'s own CPU apart "
            "(it serves one system at a time, so each iteration's share is that system's):", "")
    sec.table(*cpu_rows(results, backend_name))
    ratios = httpbench.ratios(results, pairs, ctx.settings)
    report.ratio_table(sec, ratios)
    cpu = []
    for label, a, b in pairs:
        if a in results and b in results:
            r, _, _ = httpbench.cpu_pairs(results, a, b)
            if r:
                cpu.append({"label": label + ", CPU per request", "ratio": r})
    if cpu:
        sec.add("CPU per request (front + PHP), the same pairs:", "")
        report.ratio_table(sec, cpu)
    sec.chart(ctx, f"fiberio_{slug}_rps.svg", f"{title}: requests per second", "requests/s", report.rps_bars(results))
    sec.chart(ctx, f"fiberio_{slug}_cpu.svg", f"{title}: CPU per request (front + PHP)", "us", cpu_bars(results))
    syscall_table(sec, results, counts, backend_name)
    sec.summarize(ratios, prefix=f"{slug}: ")
    return ratios


def goals(sec, ratios, levels):
    by = {r["label"]: r["ratio"] for r in ratios if r.get("ratio")}
    lines = []
    for n in levels:
        s = by.get(f"hooked {n} / sync")
        a = by.get(f"hooked {n} / async {n}")
        if s:
            lines.append(f"- {n}/worker: hooked / sync **{s['median']:.1f}x** (min {s['min']:.1f}x; goal >= "
                         f"{GOAL_SYNC:.0f}x: {'met' if s['median'] >= GOAL_SYNC else 'missed'})")
        if a:
            met = "met" if 1 / a["median"] <= GOAL_ASYNC else "missed"
            lines.append(f"- {n}/worker: async / hooked **{1 / a['median']:.2f}x** (worst round "
                         f"{1 / a['min']:.2f}x; goal <= {GOAL_ASYNC}x: {met})")
    if lines:
        sec.add("**Issue 35's goals** (paired req/s ratios, medians):", "", *lines, "")


def run(ctx):
    sec = report.Section(NAME, TITLE)
    if not os.path.exists(ext_so(ctx.root)):
        return sec.not_run("ext/ferry is not built (make build): pool.fiber_io needs it")
    levels = QUICK_LEVELS if ctx.settings.quick else LEVELS
    worker = os.path.join(ctx.root, "bench", "apps", "fiberio", "worker.php")
    conns = WORKERS * max(levels)
    sec.add(f"Every request waits {WAIT * 1000:.0f} ms in the database, so the page is I/O-bound: "
            f"{WORKERS} sequential workers top out near {WORKERS / WAIT:.0f} req/s. {WORKERS} workers everywhere; "
            "wrk keeps enough connections open to fill the largest Fiber system, with a "
            f"{WRK_TIMEOUT} s timeout since the sequential systems queue the rest. Code: `bench/apps/fiberio/`.", "")
    data = {"wait_s": WAIT, "workers": WORKERS, "levels": list(levels)}
    missing = 0

    sec.add("### Tarantool: an unmodified blocking client", "",
            "`SyncTarantool.php`: IPROTO over `stream_socket_client()`, `fwrite()`, `fread()`, nothing of Ferry in "
            f"it, calling `fio_wait({WAIT})` (a Lua `fiber.sleep`). A request takes an idle connection of its "
            "worker or opens one, and gives it back, so no two Fibers share a socket. Systems: sequential workers "
            "(`pipeline: 1`); `pool.fibers` + `pool.fiber_io` at each `max_concurrency`; and Ferry's own "
            "connector (php/tarantool, non-blocking on the worker's loop, one shared connection per worker) at "
            f"the same levels. wrk: {conns} connections.", "")
    try:
        tnt, tport = start_tarantool(ctx)
    except Missing as e:
        sec.add(f"**not run**: {e}", "")
        missing += 1
        tnt = None
    except StartError as e:
        sec.add(f"**not run**: {e}", "")
        ctx.fail(f"tarantool: {e}")
        tnt = None
    if tnt:
        try:
            pairs = [(f"hooked {n} / sync", f"hooked-{n}", "sync") for n in levels]
            pairs += [(f"hooked {n} / async {n}", f"hooked-{n}", f"async-{n}") for n in levels]
            top = max(levels)
            results, errors, counts = measure(ctx, tarantool_systems(ctx, worker, tport, levels), tnt,
                                              checker("waited "), conns, profile=(f"hooked-{top}", f"async-{top}"))
        finally:
            tnt.stop()
        ratios = part(ctx, sec, results, errors, pairs, "tarantool", "tarantool", "Tarantool, blocking client",
                      counts)
        goals(sec, ratios, levels)
        data["tarantool"] = {"results": httpbench.public(results or {}), "ratios": ratios, "start_errors": errors,
                             "syscalls": counts}

    pconns = WORKERS * PDO_FIBERS
    sec.add("### PDO MySQL: a page that waits on its database", "",
            f"`pdo.php`, the same file under php-fpm and in Ferry's workers: a new PDO connection per request "
            f"(as an FPM app opens it) and `SELECT SLEEP({WAIT})` on MariaDB. Ferry with `pool.fibers` + "
            f"`pool.fiber_io` ({PDO_FIBERS}/worker), Ferry's sequential workers, nginx + php-fpm. "
            f"wrk: {pconns} connections.", "")
    try:
        db, dport = start_mariadb(ctx)
    except Missing as e:
        sec.add(f"**not run**: {e}", "")
        missing += 1
        db = None
    except StartError as e:
        sec.add(f"**not run**: {e}", "")
        ctx.fail(f"mariadbd: {e}")
        db = None
    if db:
        try:
            ppairs = [("Fibers hooked / sequential", "pdo-hooked", "pdo-sequential"),
                      ("Fibers hooked / nginx + php-fpm", "pdo-hooked", "pdo-fpm"),
                      ("sequential / nginx + php-fpm", "pdo-sequential", "pdo-fpm")]
            results, errors, counts = measure(ctx, pdo_systems(ctx, worker, dport), db, checker("slept 0"), pconns,
                                              profile=("pdo-hooked",))
        finally:
            db.stop()
        ratios = part(ctx, sec, results, errors, ppairs, "mariadbd", "pdo", "PDO MySQL", counts)
        data["pdo"] = {"results": httpbench.public(results or {}), "ratios": ratios, "start_errors": errors,
                       "syscalls": counts}
    if "tarantool" not in data and "pdo" not in data:
        if missing == 2:
            return sec.not_run("neither tarantool nor mariadbd is installed")
        return sec.failed("neither tarantool nor mariadbd started")
    sec.data = data
    return sec
