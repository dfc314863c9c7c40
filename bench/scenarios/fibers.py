"""fibers: an I/O-bound endpoint (each request waits 5 ms inside Tarantool, then reads a
tuple) on Ferry in Fiber mode with 2 workers vs classic workers (2 and 20)."""

import os
import socket
import time

from lib import httpbench, report
from lib.proc import Proc, StartError, free_port
from lib.systems import Ferry, check

NAME = "fibers"
TITLE = "I/O-bound requests: Fiber mode vs one request at a time per worker"
RATIOS = [("Fibers, 2 workers / classic, 2 workers", "fibers-2", "classic-2"),
          ("Fibers, 2 workers / classic, 20 workers", "fibers-2", "classic-20")]
CONNECTIONS = 200  # enough requests in flight for 2 workers x 64 Fibers


def start_tarantool(ctx):
    port = free_port()
    data = ctx.dir(NAME, "tarantool")
    env = dict(os.environ, IOBOUND_LISTEN=f"127.0.0.1:{port}", IOBOUND_DIR=data)
    proc = Proc("tarantool", ["tarantool", os.path.join(ctx.root, "bench", "apps", "iobound", "init.lua")],
                os.path.join(data, "tarantool.log"), cwd=data, env=env).start()
    deadline = time.time() + 15
    while time.time() < deadline:
        if not proc.alive():
            raise StartError("tarantool exited during start; see " + os.path.join(data, "tarantool.log"))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.1)
    proc.stop()
    raise StartError("tarantool did not listen within 15 s")


def run(ctx):
    sec = report.Section(NAME, TITLE)
    try:
        tnt, port = start_tarantool(ctx)
    except StartError as e:
        return sec.not_run(str(e))
    worker = os.path.join(ctx.root, "bench", "apps", "iobound", "worker.php")
    env = {"IOBOUND_TARANTOOL": f"tcp://127.0.0.1:{port}"}
    sec.add("Each request calls the Lua function `io_wait` (`fiber.sleep(0.005)` then a primary-key "
            "`get`) through php/tarantool (`bench/apps/iobound/`). Classic workers hold one request at a "
            "time and sit idle during the 5 ms; in Fiber mode (`pool.fibers: true`, max_concurrency 64) the "
            "connector suspends only the job's Fiber and the worker's single event loop "
            "(`Ferry\\Tarantool\\Async\\WorkerLoop`) runs other requests, whose Tarantool calls share one "
            f"connection. wrk keeps {CONNECTIONS} connections open.", "")
    systems = [
        Ferry(ctx, "fibers-2", "Ferry, Fiber mode, 2 workers", worker, env=env, workers=2, fibers=True),
        Ferry(ctx, "classic-2", "Ferry, classic, 2 workers", worker, env=env, workers=2, pipeline=1),
        Ferry(ctx, "classic-20", "Ferry, classic, 20 workers", worker, env=env, workers=20, pipeline=1),
    ]
    started, errors = httpbench.start_all(ctx, systems, lambda s: check(s, "/", want_type="text/plain"))
    try:
        if not started:
            return sec.failed("no system started: " + "; ".join(errors.values()))
        results = httpbench.compare(ctx, started, connections=CONNECTIONS)
    finally:
        httpbench.stop_all(started)
        tnt.stop()
    report.http_table(sec, results)
    ratios = httpbench.ratios(results, RATIOS, ctx.settings)
    report.ratio_table(sec, ratios)
    sec.chart(ctx, "fibers_rps.svg", "I/O-bound (5 ms in Tarantool): requests per second", "requests/s",
              report.rps_bars(results))
    sec.data = {"results": httpbench.public(results), "ratios": ratios, "start_errors": errors}
    sec.summarize(ratios)
    return sec
