"""The measuring method: fixed-size iterations repeated until the last few
agree within a tolerance, a pause between them, warm-up discarded, and competitors
alternated A B A B so that machine drift hits all of them alike."""

import statistics
import time
from dataclasses import dataclass


@dataclass
class Settings:
    duration: int = 5          # whole seconds of load per HTTP iteration (wrk's -d)
    tolerance: float = 0.03    # (max - min) / median of the window
    window: int = 5            # iterations that must agree
    max_iterations: int = 10   # cap; the report says "did not settle" when it is hit
    pause: float = 1.0         # seconds between iterations (lets CPU clocks and sockets calm down)
    warmup: bool = True        # one discarded iteration per competitor first
    quick: bool = False        # CI smoke: one iteration, no settling

    def describe(self):
        if self.quick:
            return f"quick mode: 1 iteration of {self.duration:g}s per system, no warm-up, no settling"
        return (f"{self.duration:g}s per iteration, warm-up iteration discarded, repeated until the last "
                f"{self.window} are within {self.tolerance:.0%} (max-min over median) or {self.max_iterations} "
                f"iterations, {self.pause:g}s pause between iterations, systems alternated each round")


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    med = statistics.median(values)
    return (max(values) - min(values)) / med if med else None


def is_settled(values, window, tolerance):
    if len(values) < window:
        return False
    s = spread(values[-window:])
    return s is not None and s <= tolerance


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"min": min(values), "median": statistics.median(values), "max": max(values), "n": len(values)}


def alternate(names, measure, settings, metric="rps", progress=None):
    """Runs measure(name) for every name, round after round, until every series settled.

    measure returns a dict holding `metric`; an exception drops that competitor (its error is
    kept) while the others go on. Returns {name: {"iterations", "settled", "error", "rounds"}}."""
    state = {n: {"iterations": [], "rounds": [], "settled": False, "error": None} for n in names}
    active = list(names)

    def one(name, label):
        try:
            return measure(name)
        except Exception as e:  # noqa: BLE001 - any failure of one system is reported, not fatal
            state[name]["error"] = f"{type(e).__name__}: {e}"
            active.remove(name)
            if progress:
                progress(f"{label} {name}: FAILED {e}")
            return None

    if settings.warmup and not settings.quick:
        for name in list(active):
            if one(name, "warm-up") is not None and progress:
                progress(f"warm-up {name}: done (discarded)")
            time.sleep(settings.pause)
    cap = 1 if settings.quick else settings.max_iterations
    for rnd in range(1, cap + 1):
        for name in list(active):
            res = one(name, f"round {rnd}/{cap}")
            if res is None:
                continue
            st = state[name]
            st["iterations"].append(res)
            st["rounds"].append(rnd)
            series = [r[metric] for r in st["iterations"]]
            st["settled"] = is_settled(series, settings.window, settings.tolerance)
            if progress:
                s = spread(series[-settings.window:])
                progress(f"round {rnd}/{cap} {name:<16} {fmt_metric(res, metric)}  median so far "
                         f"{statistics.median(series):,.0f}  spread(last {min(len(series), settings.window)}) "
                         f"{s:.1%}{'  settled' if st['settled'] else ''}")
            if settings.pause and not settings.quick:
                time.sleep(settings.pause)
            elif settings.pause:
                time.sleep(min(settings.pause, 0.05))
        if active and all(state[n]["settled"] for n in active):
            break
    return state


def fmt_metric(res, metric):
    v = res[metric]
    extra = ""
    if "p99_ms" in res and res.get("p99_ms") is not None:
        extra = f"  p50 {res['p50_ms']:.2f} ms  p99 {res['p99_ms']:.2f} ms"
    return f"{v:>10,.0f} {metric}{extra}"


def window_of(st, settings):
    """The iterations the result is built from: the settled window, or all when capped."""
    its = st["iterations"]
    n = 1 if settings.quick else settings.window
    return its[-n:] if st["settled"] else its


def paired_ratios(st_a, st_b, metric, settings):
    """A/B for every round both ran: over the last `window` such rounds when both settled,
    else over all of them (as window_of does, so an unsettled pair shows its full spread)."""
    a = dict(zip(st_a["rounds"], (r.get(metric) for r in st_a["iterations"])))
    b = dict(zip(st_b["rounds"], (r.get(metric) for r in st_b["iterations"])))
    common = sorted(set(a) & set(b))
    if settings.quick or (st_a["settled"] and st_b["settled"]):
        common = common[-(1 if settings.quick else settings.window):]
    ratios = [a[r] / b[r] for r in common if a[r] is not None and b[r]]
    return summary(ratios)
