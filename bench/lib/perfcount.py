"""Syscalls and context switches per request, by name, from `perf stat` tracepoints: where a
request's kernel time goes when two systems do the same work differently (the fiberio
scenario's hooked blocking client against the async connector)."""

import shutil
import subprocess

from . import wrk
from .proc import cpu_split

SYSCALLS = ("poll", "pselect6", "epoll_wait", "dup", "close", "sendto", "recvfrom", "read", "write", "getpid")


def available():
    """True when perf can count syscall tracepoints here (installed, and allowed to)."""
    if not shutil.which("perf"):
        return False
    res = subprocess.run(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "--", "true"],
                         capture_output=True, text=True)
    return res.returncode == 0 and "not supported" not in res.stderr and "<not counted>" not in res.stderr


def _parse(err):
    out = {}
    for line in err.splitlines():
        parts = line.split(",")
        if len(parts) < 3 or not parts[0].replace(".", "").isdigit():
            continue
        ev = parts[2]
        name = ("syscalls" if ev == "raw_syscalls:sys_enter" else
                ev.split("sys_enter_", 1)[1] if "sys_enter_" in ev else ev)
        out[name] = float(parts[0])
    return out


def count(url, groups, seconds, connections, threads, timeout_s=None):
    """Loads url with wrk for seconds + 1 while perf counts each group's syscalls ({name: pids})
    for seconds and /proc their CPU; returns {group: {event: per request, user_us, sys_us}}."""
    events = ["raw_syscalls:sys_enter", "context-switches"] + [f"syscalls:sys_enter_{s}" for s in SYSCALLS]
    before = {g: cpu_split(pids) for g, pids in groups.items()}
    perfs = {g: subprocess.Popen(["perf", "stat", "-x,", "-e", ",".join(events), "-p", ",".join(map(str, pids)),
                                  "--", "sleep", str(seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True)
             for g, pids in groups.items() if pids}
    res = wrk.run(url, seconds + 1, connections, threads, timeout_s=timeout_s)
    errs = {g: p.communicate(timeout=seconds + 30)[1] for g, p in perfs.items()}
    n = res["requests"]
    if not n:
        return {}
    # perf counted for `seconds` of wrk's seconds + 1; /proc for all of them.
    window = n * seconds / (seconds + 1)
    out = {"rps": res["rps"]}
    for g, err in errs.items():
        (u0, s0), (u1, s1) = before[g], cpu_split(groups[g])
        out[g] = {k: v / window for k, v in _parse(err).items()}
        out[g]["user_us"] = (u1 - u0) * 1e6 / n
        out[g]["sys_us"] = (s1 - s0) * 1e6 / n
    return out
