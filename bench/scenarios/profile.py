"""profile: where one hello request's CPU goes, in the front and in the PHP workers.

The front is sampled with Go's pprof through the admin socket, and each sample is put in one
bucket by its stack (HTTP I/O, relay, pool, scheduler, ...). The PHP workers are split into
user and kernel time from /proc, with their syscalls and context switches from `perf stat`
when perf is installed. Every --ferry-rev runs next to the working tree, alternated per round,
so a before/after table comes from one run."""

import http.client
import os
import re
import shutil
import socket
import subprocess
import threading
import time

from lib import httpbench, report, wrk
from lib.proc import cpu_split
from lib.systems import Ferry
from scenarios.hello import check_hello

NAME = "profile"
TITLE = "where a hello request's CPU goes (pprof on the front, /proc and perf on PHP)"
COMPARES_REVISIONS = True

# First match wins, tested on the whole stack (leaf first). The order matters: a relay write
# made from a connection's goroutine is the relay's, not the connection's.
BUCKETS = [
    ("GC", r"runtime\.gcBgMarkWorker|runtime\.gcAssistAlloc|runtime\.bgsweep|runtime\.bgscavenge"),
    ("relay writes", r"pool\.\(\*Worker\)\.(write|submit|flush)|relay\.\(\*Conn\)\.Write"),
    ("relay reads", r"(syscall\.[Rr]ead|poll\.\(\*FD\)\.Read)[^;]*;.*pool\.\(\*Worker\)\.readLoop"),
    ("parsing and settling answers", r"pool\.\(\*Worker\)\.readLoop|frame\.\(\*Reader\)"),
    ("HTTP write (loopback send, waking wrk)", r"net\.\(\*conn\)\.Write|net\.\(\*netFD\)\.Write"),
    ("HTTP read", r"net\.\(\*conn\)\.Read|net\.\(\*netFD\)\.Read"),
    ("building the job context", r"gateway\.(\(\*Handler\)\.)?encodeRequest"),
    ("pool acquire/submit/wait/release", r"pool\.\(\*Pool\)\."),
    # The front's packages: one bucket whichever revision is profiled, before
    # or after the sockets, static files and compression left the gateway.
    ("gateway rest (header checks, answers)", r"internal/(gateway|listen|compress|static)\."),
    ("fasthttp's own work", r"fasthttp\."),
    ("Go scheduler, netpoll and sysmon", r"runtime\.(mcall|schedule|findRunnable|park_m|sysmon|mstart|netpoll|goexit0)"),
]
OTHER = "other"


def classify(stack):
    joined = ";".join(stack)
    for label, rx in BUCKETS:
        if re.search(rx, joined):
            return label
    return OTHER


def parse_traces(text):
    """`go tool pprof -traces` output -> {bucket: seconds}."""
    out = {}
    for block in text.split("-----------+")[1:]:
        lines = [ln for ln in block.splitlines()[1:] if ln.strip()]
        if not lines:
            continue
        m = re.match(r"\s*([\d.]+)(ns|us|µs|ms|s)\s+(.*)", lines[0])
        if not m:
            continue
        secs = float(m.group(1)) * {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1}[m.group(2)]
        stack = [m.group(3).strip()] + [ln.strip() for ln in lines[1:]]
        label = classify(stack)
        out[label] = out.get(label, 0) + secs
    return out


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("ferry", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def fetch_profile(sock, seconds, dest):
    conn = UnixHTTP(sock, timeout=seconds + 30)
    conn.request("GET", f"/debug/pprof/profile?seconds={seconds}")
    res = conn.getresponse()
    body = res.read()
    if res.status != 200:
        raise RuntimeError(f"pprof answered {res.status}: {body[:200]!r}")
    with open(dest, "wb") as f:
        f.write(body)


def perf_stat(pids, seconds):
    """Starts `perf stat` on pids for seconds; the returned function gives
    {syscalls, context-switches} or {} without perf (or without permission)."""
    if not shutil.which("perf") or not pids:
        return lambda: {}
    p = subprocess.Popen(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter,context-switches",
                          "-p", ",".join(map(str, pids)), "--", "sleep", str(seconds)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def done():
        _, err = p.communicate(timeout=seconds + 30)
        out = {}
        for line in err.splitlines():
            parts = line.split(",")
            if len(parts) > 2 and parts[0].replace(".", "").isdigit():
                out["syscalls" if "sys_enter" in parts[2] else "context switches"] = float(parts[0])
        return out
    return done


def measure(ctx, s, seconds, round_no):
    """One profiled wrk run of s: front buckets and PHP split, per request."""
    front, php = s.cpu_pids()
    prof = ctx.path("profile", f"{s.key}-{round_no}.pprof")
    box = {}
    grab = threading.Thread(target=lambda: box.update(err=_try(fetch_profile, s.admin_socket, seconds, prof)))
    fu0, fs0 = cpu_split(front)
    pu0, ps0 = cpu_split(php)
    stats = perf_stat(php, seconds)
    fstats = perf_stat(front, seconds)
    grab.start()
    res = wrk.run(s.url, seconds + 1, ctx.connections, ctx.threads)
    grab.join()
    fu1, fs1 = cpu_split(front)
    pu1, ps1 = cpu_split(php)
    n = res["requests"]
    if box.get("err") or not n:
        raise RuntimeError(f"{s.label}: {box.get('err') or 'no requests'}")
    window = n * seconds / (seconds + 1)  # requests served while pprof sampled
    binary = s.revision.bin if s.revision else ctx.ferry_bin
    traces = subprocess.run(["go", "tool", "pprof", "-traces", binary, prof], capture_output=True, text=True,
                            timeout=120).stdout
    buckets = {k: v * 1e6 / window for k, v in parse_traces(traces).items()}
    php_counts = {k: v / window for k, v in stats().items()}
    front_counts = {k: v / window for k, v in fstats().items()}
    return {"rps": res["rps"], "front": buckets,
            "front_proc": (fu1 - fu0 + fs1 - fs0) * 1e6 / n,
            "php_user": (pu1 - pu0) * 1e6 / n, "php_sys": (ps1 - ps0) * 1e6 / n,
            "php_counts": php_counts, "front_counts": front_counts}


def _try(fn, *args):
    try:
        fn(*args)
    except (OSError, RuntimeError, http.client.HTTPException) as e:
        return str(e)
    return None


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else 0.0


def run(ctx):
    sec = report.Section(NAME, TITLE)
    seconds = 2 if ctx.quick else 6
    rounds = 1 if ctx.quick else 3
    sec.add(f"hello (`examples/hello/worker.php`), `wrk -t{ctx.threads} -c{ctx.connections}`, {rounds} alternated "
            f"round(s) per system; in each, pprof samples the front for {seconds} s through the admin socket while "
            "/proc and `perf stat` count the PHP workers. Figures are µs (or counts) per request, the median over "
            "the rounds. Each pprof sample goes to the first bucket its stack matches (`BUCKETS` in "
            "`bench/scenarios/profile.py`); the sampled total is below the /proc one because pprof misses "
            "time in the kernel's scheduler and interrupts.", "")
    worker = os.path.join(ctx.root, "examples", "hello", "worker.php")
    systems = [Ferry(ctx, "ferry", "Ferry", worker, admin=True)] + [
        Ferry(ctx, r.key, r.label, r.path("examples", "hello", "worker.php"), revision=r, admin=True)
        for r in ctx.revisions.ready()]
    started, _ = httpbench.start_all(ctx, systems, check_hello)
    if not started:
        sec.failed("no system started")
        return sec
    data = {s.key: [] for s in started}
    try:
        for s in started:
            wrk.run(s.url, 1, ctx.connections, ctx.threads)  # warm-up
        for rnd in range(rounds):
            for s in started:
                ctx.progress(f"round {rnd + 1}/{rounds} {s.label}: profiling {seconds} s")
                try:
                    data[s.key].append(measure(ctx, s, seconds, rnd))
                except (RuntimeError, wrk.WrkError, subprocess.TimeoutExpired) as e:
                    ctx.fail(str(e))
                time.sleep(ctx.settings.pause)
    finally:
        httpbench.stop_all(started)
    started = [s for s in started if data[s.key]]
    if not started:
        sec.failed("no profile was taken")
        return sec
    labels = [b[0] for b in BUCKETS] + [OTHER]
    rows = []
    for label in labels:
        vals = [median([d["front"].get(label, 0) for d in data[s.key]]) for s in started]
        if any(v >= 0.005 for v in vals):
            rows.append([label] + [f"{v:.2f}" for v in vals])
    sampled = [median([sum(d["front"].values()) for d in data[s.key]]) for s in started]
    proc_front = [median([d["front_proc"] for d in data[s.key]]) for s in started]
    rows.append(["**sampled / from /proc**"] + [f"**{a:.2f} / {b:.2f}**" for a, b in zip(sampled, proc_front)])
    for key, name in (("syscalls", "syscalls per request"), ("context switches", "context switches per request")):
        vals = [median([d["front_counts"].get(key, 0) for d in data[s.key]]) for s in started]
        if any(vals):
            rows.append([name] + [f"{v:.2f}" for v in vals])
    sec.add("### Front (Go), µs per request", "")
    sec.table(["where"] + [s.label for s in started], rows)
    php_rows = [["user", *[f"{median([d['php_user'] for d in data[s.key]]):.2f}" for s in started]],
                ["kernel", *[f"{median([d['php_sys'] for d in data[s.key]]):.2f}" for s in started]]]
    for key in ("syscalls", "context switches"):
        vals = [median([d["php_counts"].get(key, 0) for d in data[s.key]]) for s in started]
        if any(vals):
            php_rows.append([f"{key} per request"] + [f"{v:.2f}" for v in vals])
    sec.add("### PHP workers, µs per request", "")
    sec.table(["where"] + [s.label for s in started], php_rows)
    sec.add("req/s while profiled: " + ", ".join(
        f"{s.label} {median([d['rps'] for d in data[s.key]]):,.0f}" for s in started), "")
    bars = []
    for s in started:
        for label in labels:
            v = median([d["front"].get(label, 0) for d in data[s.key]])
            if v >= 0.05:
                bars.append({"label": label, "value": v, "group": s.label})
        bars.append({"label": "PHP user", "value": median([d["php_user"] for d in data[s.key]]), "group": s.label})
        bars.append({"label": "PHP kernel", "value": median([d["php_sys"] for d in data[s.key]]), "group": s.label})
    sec.chart(ctx, "profile_buckets.svg", "hello: CPU per request by where it goes", "µs per request", bars)
    return sec
