"""soak: the front's memory over a long hello run, which must plateau after warm-up (issue 30)."""

import http.client
import os
import re
import socket
import threading
import time

from lib import report, wrk
from lib.httpbench import start_all, stop_all
from lib.systems import Ferry

from .hello import check_hello

NAME = "soak"
TITLE = "front memory over a long hello run: RSS after warm-up vs at the end"
COMPARES_REVISIONS = True
DEFAULT_REQUESTS = 5_000_000
QUICK_REQUESTS = 20_000
WARMUP = 0.10  # the share of the requests after which the front counts as warmed up
LIMIT = 0.05  # how much the front's RSS may grow from the end of warm-up to the end
# Go's background scavenger returns freed heap pages to the kernel only beyond this share
# over what the heap held when the last collection ended, which in a steady state is about
# the GC goal (retainExtraPercent in the runtime's mgcscavenge.go). Once the heap has held
# that much, its footprint stays there as long as the goal, that is the live heap, does.
RETAINED_OVER_GOAL = 0.10
STATUS_FIELDS = ("VmRSS", "RssAnon", "RssFile", "RssShmem", "Threads")
# The Go runtime's own view, from the Prometheus exposition on the admin socket: what the
# heap holds (live objects and not yet collected garbage), what it keeps of freed pages
# without returning them to the kernel, and the goroutine stacks.
GO_METRICS = {"heap_inuse": "go_memstats_heap_inuse_bytes", "heap_idle": "go_memstats_heap_idle_bytes",
              "heap_released": "go_memstats_heap_released_bytes", "stack_inuse": "go_memstats_stack_inuse_bytes",
              "next_gc": "go_memstats_next_gc_bytes", "gc_cycles": "go_gc_duration_seconds_count",
              "goroutines": "go_goroutines"}


def requests_for(ctx):
    return ctx.soak_requests or (QUICK_REQUESTS if ctx.quick else DEFAULT_REQUESTS)


def memory(pid):
    """VmRSS, RssAnon, RssFile (KiB) and Threads from /proc/<pid>/status, Pss (KiB) from
    smaps_rollup; None once the process is gone."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                name, _, value = line.partition(":")
                if name in STATUS_FIELDS:
                    out[name] = int(value.split()[0])
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    out["Pss"] = int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return out if "VmRSS" in out else None


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=5.0):
        super().__init__("ferry", timeout=timeout)
        self.path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.path)
        self.sock = s


def go_memory(system):
    """GO_METRICS from the admin socket's /metrics (bytes, counts), or {} if unreachable."""
    if not getattr(system, "admin_socket", ""):
        return {}
    conn = UnixHTTPConnection(system.admin_socket)
    try:
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException):
        return {}
    finally:
        conn.close()
    out = {}
    for key, name in GO_METRICS.items():
        m = re.search(rf"^{name} (\S+)$", text, re.M)
        if m:
            out[key] = float(m.group(1))
    return out


def judge(samples, total, warmup=WARMUP, limit=LIMIT):
    """The sample at the end of warm-up (the first one at or past warmup * total requests)
    and the last one, and how much VmRSS and Pss grew between them. verdict is None when
    the run is too short to have both."""
    warm = next((s for s in samples if s["sent"] >= warmup * total), None)
    end = samples[-1] if samples else None
    if warm is None or end is None or end is warm:
        return {"warm": warm, "end": end, "rss_growth": None, "pss_growth": None, "verdict": None}
    rss = end["VmRSS"] / warm["VmRSS"] - 1
    pss = end["Pss"] / warm["Pss"] - 1 if warm.get("Pss") and end.get("Pss") else None
    return {"warm": warm, "end": end, "rss_growth": rss, "pss_growth": pss, "verdict": rss <= limit}


class Sampler:
    """Samples the front's memory every second on its own thread while wrk runs, with the
    number of requests sent so far, and fetches the runtime's view once warm-up is over."""

    def __init__(self, ctx, system, total, label, every=1.0):
        self.ctx, self.system, self.total, self.label, self.every = ctx, system, total, label, every
        self.pid = system.procs[0].pid
        self.sent = 0
        self.samples = []
        self.go_warm = None
        self.stop = threading.Event()
        self.started = time.monotonic()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def sample(self):
        m = memory(self.pid)
        if m:
            m.update(t=round(time.monotonic() - self.started, 2), sent=self.sent)
            self.samples.append(m)
        return m

    def loop(self):
        last_note = 0.0
        while not self.stop.wait(self.every):
            m = self.sample()
            if m and self.go_warm is None and m["sent"] >= WARMUP * self.total:
                self.go_warm = go_memory(self.system)
            if m and m["t"] - last_note >= 10:
                last_note = m["t"]
                self.ctx.progress(f"{self.label}: {m['sent']:,} / {self.total:,} requests, RSS "
                                  f"{m['VmRSS'] / 1024:.1f} MiB, PSS {m.get('Pss', 0) / 1024:.1f} MiB")

    def __enter__(self):
        self.sample()
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=10)
        self.sample()  # the end: wrk is done, nothing else has run in the front since


def soak(ctx, system, total):
    """Loads system with `total` hello requests while sampling its front; returns the run."""
    go_memory(system)  # once before the load, so that serving /metrics is not counted as growth
    # A quick run lasts about a second: sampled more often, it still has a warm-up point.
    sampler = Sampler(ctx, system, total, system.label, every=0.1 if ctx.quick else 1.0)
    script = ctx.path(NAME, f"{system.key}-count.lua")
    with sampler:
        res = wrk.run_count(system.url + "/", total, ctx.connections, ctx.threads, script,
                            on_sent=lambda n: setattr(sampler, "sent", n),
                            give_up=lambda: system.health() is not None)
    dead = system.health()
    if dead:
        raise wrk.WrkError(dead)
    if res["non2xx"] or res["requests"] == 0:
        raise wrk.WrkError(f"{res['non2xx']} non-2xx responses, {res['requests']} requests ({res['argv']})")
    run = judge(sampler.samples, total)
    run.update(samples=sampler.samples, wrk={k: v for k, v in res.items() if k != "argv"}, argv=res["argv"],
               go_warm=sampler.go_warm or {}, go_end=go_memory(system))
    return run


def mib(kib):
    return "-" if kib is None else f"{kib / 1024:.2f}"


def mib_b(v):
    return "-" if v is None else f"{v / (1 << 20):.2f}"


def pct(v):
    return "-" if v is None else f"{v:+.1%}"


def run(ctx):
    sec = report.Section(NAME, TITLE)
    total = requests_for(ctx)
    worker = os.path.join(ctx.root, "examples", "hello", "worker.php")
    systems = [Ferry(ctx, "ferry", "Ferry (this tree)", worker, admin=True)] + [
        Ferry(ctx, r.key, r.label, r.path("examples", "hello", "worker.php"), revision=r, admin=True)
        for r in ctx.revisions.ready()]
    sec.add(f"One Ferry serving `examples/hello/worker.php` ({ctx.workers} workers, default pool) gets {total:,} "
            f"requests from wrk ({ctx.connections} keep-alive connections, {ctx.threads} thread(s)), each "
            "thread stopping once it has sent its share. Every second the front's (the `ferry` process's) VmRSS, "
            "RssAnon and RssFile are read from /proc/<pid>/status and its PSS from smaps_rollup. The RSS at the "
            f"end of warm-up (the first sample after {WARMUP:.0%} of the requests) is compared with the RSS at "
            f"the end: this tree's Ferry fails the scenario if it grew by more than {LIMIT:.0%}. The Go heap "
            "columns come from the admin socket's /metrics at the same two points, which tells a growing live "
            "heap from the runtime keeping pages it has freed. Revisions given with --ferry-rev are soaked "
            "after it, one at a time, and shown for comparison only.", "")
    runs, rows = {}, []
    for system in systems:
        started, errors = start_all(ctx, [system], check_hello)
        if not started:
            sec.add(f"- **{system.label} not measured**: {errors.get(system.key)}")
            continue
        try:
            ctx.progress(f"{system.label}: soak of {total:,} requests")
            try:
                r = soak(ctx, system, total)
            except wrk.WrkError as e:
                ctx.fail(f"{system.label}: {e}")
                sec.add(f"- **{system.label} failed**: {e}")
                continue
        finally:
            stop_all(started)
        runs[system.key] = r
        w, e = r["warm"] or {}, r["end"] or {}
        rows.append([system.label, f"{r['wrk']['requests']:,}", f"{r['wrk']['rps']:,.0f}",
                     f"{w.get('sent', 0):,}", mib(w.get("VmRSS")), mib(e.get("VmRSS")), pct(r["rss_growth"]),
                     mib(w.get("Pss")), mib(e.get("Pss")), pct(r["pss_growth"])])
    if not runs:
        return sec.failed("no Ferry completed the soak")
    sec.table(["system", "requests", "req/s", "warm-up ends at", "RSS MiB warm-up", "RSS MiB end", "RSS growth",
               "PSS MiB warm-up", "PSS MiB end", "PSS growth"], rows)
    detail = []
    for key, r in runs.items():
        label = next(s.label for s in systems if s.key == key)
        for when, sample, go in (("warm-up", r["warm"], r["go_warm"]), ("end", r["end"], r["go_end"])):
            sample = sample or {}
            retained = go["heap_idle"] - go["heap_released"] if "heap_idle" in go and "heap_released" in go else None
            held = go["heap_inuse"] + retained if retained is not None and "heap_inuse" in go else None
            ceiling = go["next_gc"] * (1 + RETAINED_OVER_GOAL) if "next_gc" in go else None
            detail.append([label, when, mib(sample.get("RssAnon")), mib(sample.get("RssFile")),
                           str(sample.get("Threads", "-")), mib_b(go.get("heap_inuse")), mib_b(retained),
                           f"{mib_b(held)} / {mib_b(ceiling)}", mib_b(go.get("stack_inuse")),
                           mib_b(go.get("next_gc")), "-" if "gc_cycles" not in go else f"{go['gc_cycles']:.0f}"])
    sec.add("### Where the memory is", "",
            "RssAnon is the heap, stacks and runtime data; RssFile the binary's pages read so far. Go heap in "
            "use counts live objects and garbage not yet collected (it swings between collections up to the "
            "GC goal, twice the live heap); retained free is heap memory freed but not yet returned to the "
            "kernel. Their sum, the heap's footprint, grows until it reaches the runtime's ceiling, about the GC "
            f"goal plus {RETAINED_OVER_GOAL:.0%} (beyond it the scavenger gives pages back), and stays there unless "
            "the goal itself, that is the live heap, grows: growth up to the ceiling is the runtime settling, "
            "growth of the goal is a leak.", "")
    sec.table(["system", "when", "RssAnon MiB", "RssFile MiB", "threads", "Go heap in use MiB",
               "Go retained free MiB", "heap footprint / ceiling MiB", "Go stacks MiB", "GC goal MiB",
               "GC cycles"], detail)
    series, marks = [], []
    for key, r in runs.items():
        label = next(s.label for s in systems if s.key == key)
        series.append({"label": f"{label} RSS", "points": [(s["sent"], s["VmRSS"] / 1024) for s in r["samples"]]})
        series.append({"label": f"{label} PSS", "points": [(s["sent"], s["Pss"] / 1024) for s in r["samples"]
                                                          if "Pss" in s]})
    marks.append((WARMUP * total, "end of warm-up"))
    sec.line_chart(ctx, "soak_rss.svg", "soak: the front's memory over the run", "requests sent", "MiB", series,
                   marks=marks, note=f"fails when RSS grows more than {LIMIT:.0%} after warm-up")
    sec.data = {"requests": total, "warmup_share": WARMUP, "limit": LIMIT, "runs": runs}
    mine = runs.get("ferry")
    for key, r in runs.items():
        if r["rss_growth"] is not None:
            sec.summary.append(f"{key}: RSS {mib(r['warm']['VmRSS'])} -> {mib(r['end']['VmRSS'])} MiB "
                               f"({pct(r['rss_growth'])}) after warm-up over {r['wrk']['requests']:,} requests")
    if mine is None:
        return sec.failed("this tree's Ferry did not complete the soak")
    if ctx.quick:
        sec.add(f"Quick run ({total:,} requests): the heap has not reached its steady size yet, so the "
                f"{LIMIT:.0%} limit is not applied.")
        return sec
    if mine["verdict"] is None:
        return sec.failed(f"no memory sample after warm-up to judge by ({total:,} requests): give more requests")
    if not mine["verdict"]:
        return sec.failed(f"the front's RSS grew {pct(mine['rss_growth'])} after warm-up "
                          f"({mib(mine['warm']['VmRSS'])} -> {mib(mine['end']['VmRSS'])} MiB), over the "
                          f"{LIMIT:.0%} limit" + settling(mine["go_warm"], mine["go_end"]))
    return sec


def settling(warm, end):
    """Why a failed run may be the runtime settling rather than a leak, when the figures say so."""
    if not all(k in g for g in (warm, end) for k in ("next_gc", "heap_inuse", "heap_idle", "heap_released")):
        return ""
    footprint = end["heap_inuse"] + end["heap_idle"] - end["heap_released"]
    if end["next_gc"] > warm["next_gc"] * (1 + LIMIT) or footprint > end["next_gc"] * (1 + RETAINED_OVER_GOAL) * 1.02:
        return ""
    return (f"; the GC goal did not grow ({mib_b(warm['next_gc'])} -> {mib_b(end['next_gc'])} MiB) and the heap's "
            f"footprint ended at its ceiling ({mib_b(footprint)} MiB): the heap was still settling after warm-up, "
            "so a longer run is needed to judge")
