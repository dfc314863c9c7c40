"""How many PHP workers a system runs, read again and again while it is loaded: the burst
scenario's pool-size-over-time line. Ferry's count comes from its admin socket (the pool's
own view, which knows a forked worker from the zygote it came from); php-fpm's is the
master's children, which is what FPM's process manager counts too."""

import http.client
import json
import re
import socket
import threading
import time

from .proc import children

# Ferry's pool size, as docs/deploy.md defines it for ferry_workers{state}: a retiring or
# stopping worker takes no new job, so it is leaving the pool already.
LIVE = ("starting", "ready", "working")


class _UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("ferry", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def admin_get(sock_path, path, timeout=2.0):
    """GET path on Ferry's admin socket: the body as text, or None when it did not answer 200."""
    conn = _UnixHTTP(sock_path, timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read().decode(errors="replace")
        return body if resp.status == 200 else None
    except OSError:
        return None
    finally:
        conn.close()


def counter(system):
    """A function returning the system's worker count now (None when it cannot be read)."""
    if system.kind == "ferry":
        def ferry():
            body = admin_get(system.admin_socket, "/workers")
            if body is None:
                return None
            try:
                return sum(1 for w in json.loads(body) if w.get("State") in LIVE)
            except (ValueError, AttributeError):
                return None
        return ferry
    return lambda: len(children(system.procs[0].pid)) if system.procs else None


def metric_values(text, name):
    """{labels: value} of one metric in Prometheus text format ('' for no labels)."""
    out = {}
    for m in re.finditer(rf"^{re.escape(name)}(\{{[^}}]*\}})?\s+([0-9.eE+-]+|NaN)$", text or "", re.M):
        try:
            out[m.group(1) or ""] = float(m.group(2))
        except ValueError:
            pass
    return out


def ferry_pool_metrics(system):
    """What Ferry's own metrics say of the run: workers started to grow the pool, retired to
    shrink it, and their mean boot (spawn) time; {} when the admin socket does not answer."""
    text = admin_get(system.admin_socket, "/metrics")
    if text is None:
        return {}
    spawns = metric_values(text, "ferry_worker_spawns_total")
    retired = metric_values(text, "ferry_worker_restarts_total")
    total = sum(metric_values(text, "ferry_worker_spawn_seconds_sum").values())
    count = sum(metric_values(text, "ferry_worker_spawn_seconds_count").values())
    return {"scale_up": int(spawns.get('{reason="scale_up"}', 0)),
            "scale_down": int(retired.get('{reason="scale_down"}', 0)),
            "crash": int(retired.get('{reason="crash"}', 0)),
            "spawns": int(sum(spawns.values())),
            "spawn_ms_mean": total / count * 1000 if count else None}


class Sampler(threading.Thread):
    """Calls count() every `every` seconds from start() until stop(); samples are (seconds
    since t0, count). A count that could not be read is left out, not made up."""

    def __init__(self, count, t0, every):
        super().__init__(daemon=True)
        self.count, self.t0, self.every = count, t0, every
        self.samples = []
        self._halt = threading.Event()
        self._lock = threading.Lock()

    def take(self):
        """One sample now (also from the caller's thread, at the end of a step)."""
        n = self.count()
        if n is None:
            return None
        with self._lock:
            self.samples.append((time.monotonic() - self.t0, n))
        return n

    def run(self):
        while not self._halt.is_set():
            self.take()
            self._halt.wait(self.every)

    def stop(self):
        self._halt.set()
        self.join(timeout=5)
        with self._lock:
            self.samples.sort()
            return list(self.samples)
