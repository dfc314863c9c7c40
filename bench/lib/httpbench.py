"""HTTP comparisons: start systems, check them, load them with wrk in alternation."""

from . import method, wrk
from .proc import StartError, cpu_seconds


CPU_KEYS = ("cpu_front_us", "cpu_php_us", "cpu_us", "cpu_backend_us")


def cpu_meter(system):
    """Starts counting the CPU time of system's processes; the returned function adds CPU
    per request (front, PHP, both) to a load generator's result. CPU per request is steadier
    than RPS on a shared machine: it is the work a request costs, whatever else ran.
    A system with backend_pids() (a database every system of the scenario shares, loaded
    by one system at a time) also gets cpu_backend_us, kept apart from cpu_us."""
    front, php = system.cpu_pids()
    backend = system.backend_pids() if hasattr(system, "backend_pids") else []
    before = cpu_seconds(front), cpu_seconds(php), cpu_seconds(backend)

    def done(res):
        if res["requests"]:
            res["cpu_front_us"] = (cpu_seconds(front) - before[0]) * 1e6 / res["requests"]
            res["cpu_php_us"] = (cpu_seconds(php) - before[1]) * 1e6 / res["requests"]
            res["cpu_us"] = res["cpu_front_us"] + res["cpu_php_us"]
            if backend:
                res["cpu_backend_us"] = (cpu_seconds(backend) - before[2]) * 1e6 / res["requests"]
        return res
    return done


def cpu_summaries(window):
    """The CPU keys of a result, summarised over the iterations used."""
    return {k: method.summary([r[k] for r in window if k in r]) for k in CPU_KEYS}


def cpu_pairs(results, a, b, parts=("cpu_front_us", "cpu_php_us")):
    """CPU per request (by default front + PHP) of a over b, paired per round over every
    round both ran; also each side's summary over those rounds."""
    def per_round(key):
        st = results[key]["_state"]
        return {rnd: sum(it.get(p, 0) for p in parts)
                for rnd, it in zip(st["rounds"], st["iterations"]) if it.get("cpu_php_us") is not None}
    ra, rb = per_round(a), per_round(b)
    common = sorted(set(ra) & set(rb))
    return method.summary([ra[r] / rb[r] for r in common if rb[r]]), method.summary([ra[r] for r in common]), \
        method.summary([rb[r] for r in common])


def cpu_ratio_cell(r):
    return f"**{r['median']:.3f}x** ({r['min']:.3f} .. {r['max']:.3f})" if r else "-"


def start_all(ctx, systems, check):
    """Starts every system and runs check(system) on it. A system that fails is stopped,
    reported as a failure, and left out; the others are returned."""
    ok = []
    errors = {}
    for s in systems:
        ctx.progress(f"starting {s.label}")
        try:
            s.start()
            check(s)
            ok.append(s)
            ctx.progress(f"{s.label} ready on {s.url}")
        except (StartError, OSError) as e:
            errors[s.key] = str(e)
            ctx.fail(f"{s.label} did not start or answered wrongly: {e}")
            s.stop()
    return ok, errors


def compare_pair(ctx, systems, check, **compare_args):
    """Starts systems, loads them in alternation (compare()) and stops them. Returns
    (results, errors): errors maps each system that did not start to why; results is None
    when fewer than two started, since a pair is what the caller compares."""
    started, errors = start_all(ctx, systems, check)
    try:
        return (compare(ctx, started, **compare_args) if len(started) >= 2 else None), errors
    finally:
        stop_all(started)


def stop_all(systems):
    for s in systems:
        try:
            s.stop()
        except Exception:  # noqa: BLE001 - stopping must go on for the others
            pass


def compare(ctx, systems, path="/", script=None, connections=None, errors_fatal=True, settings=None, timeout_s=None):
    """Alternates wrk runs over the systems; returns {key: result} in the systems' order.
    timeout_s: wrk's per-request timeout (its own default is 2 s), for systems that queue
    requests longer than that on purpose."""
    settings = settings or ctx.settings
    conns = connections or ctx.connections
    by_key = {s.key: s for s in systems}

    def measure(key):
        s = by_key[key]
        dead = s.health()
        if dead:
            raise wrk.WrkError(dead)
        cpu = cpu_meter(s)
        res = cpu(wrk.run(s.url + path, settings.duration, conns, ctx.threads, script=script,
                          timeout_s=timeout_s, eof_delimited=s.eof_delimited))
        if errors_fatal and res["non2xx"]:
            raise wrk.WrkError(f"{res['non2xx']} responses were not 2xx/3xx ({res['argv']})")
        if errors_fatal and res["requests"] == 0:
            raise wrk.WrkError(f"no request completed ({res['argv']})")
        return res

    state = method.alternate(list(by_key), measure, settings, "rps", ctx.progress)
    out = {}
    for key, st in state.items():
        s = by_key[key]
        if st["error"]:
            ctx.fail(f"{s.label}: {st['error']}")
        win = method.window_of(st, settings)
        out[key] = {
            "label": s.label, "settled": st["settled"], "error": st["error"], "quick": settings.quick,
            "eof_delimited": s.eof_delimited,
            "iterations": st["iterations"], "rounds": st["rounds"], "window": len(win),
            "rps": method.summary([r["rps"] for r in win]),
            "p50_ms": method.summary([r["p50_ms"] for r in win]),
            "p99_ms": method.summary([r["p99_ms"] for r in win]),
            "failed_share": method.summary([r["failed_share"] for r in win]),
            **cpu_summaries(win),
            "_state": st,
        }
    return out


def ratios(results, pairs, settings, metric="rps"):
    """pairs: (label, key_a, key_b). Paired per round, min/median/max of A/B."""
    out = []
    for label, a, b in pairs:
        ra, rb = results.get(a), results.get(b)
        if not ra or not rb or not ra["iterations"] or not rb["iterations"]:
            out.append({"label": label, "a": a, "b": b, "ratio": None,
                        "reason": "one side did not run"})
            continue
        r = method.paired_ratios(ra["_state"], rb["_state"], metric, settings)
        out.append({"label": label, "a": a, "b": b, "ratio": r,
                    "reason": None if r else "no round where both answered"})
    return out


def public(results):
    """The results without the internal per-round state (for results.json)."""
    return {k: {kk: vv for kk, vv in v.items() if not kk.startswith("_")} for k, v in results.items()}
