"""Runs bench/loadgen, the Go load generator that reports latency per request class (wrk
cannot), and turns its JSON into one flat iteration record for lib/method."""

import json
import subprocess

PERCENTILES = ("p50", "p90", "p99", "max")


class LoadgenError(Exception):
    pass


def build(ctx):
    return ctx.go_build("./bench/loadgen", "loadgen")


def run(binary, url, duration, connections, classes, seed=1, timeout_s=10):
    """classes: (name, weight, path). Returns loadgen's JSON plus `argv`."""
    argv = [binary, "-url", url, "-c", str(connections), "-d", f"{duration}s", "-timeout", f"{timeout_s}s",
            "-seed", str(seed)]
    for name, weight, path in classes:
        argv += ["-class", f"{name}:{weight}:{path}"]
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=duration + timeout_s + 30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise LoadgenError(f"{' '.join(argv)}: {e}") from e
    if res.returncode != 0:
        raise LoadgenError(f"loadgen exited {res.returncode}: {' '.join(argv)}: {res.stderr.strip()[-500:]}")
    try:
        doc = json.loads(res.stdout)
    except ValueError as e:
        raise LoadgenError(f"loadgen printed no JSON ({e}): {res.stdout[-300:]!r}") from e
    doc["argv"] = " ".join(argv)
    return doc


def flatten(doc):
    """rps, failed, failed_share and, per class, <class>_rps and <class>_<percentile>_ms."""
    e = doc["errors"]
    failed = e["connect"] + e["read"] + e["write"] + e["timeout"] + e["non2xx"]
    # A refused or timed-out request never got a response, so it is not in `requests`.
    attempts = doc["requests"] + e["connect"] + e["timeout"]
    out = {"rps": doc["rps"], "requests": doc["requests"], "failed": failed, "non2xx": e["non2xx"],
           "failed_share": failed / attempts if attempts else 1.0, "unfinished": e["unfinished"],
           "argv": doc.get("argv")}
    for c in doc["classes"]:
        out[f"{c['name']}_rps"] = c["rps"]
        out[f"{c['name']}_requests"] = c["requests"]
        lat = c["latency_ms"] or {}
        for p in PERCENTILES:
            out[f"{c['name']}_{p}_ms"] = lat.get(p)
    return out
