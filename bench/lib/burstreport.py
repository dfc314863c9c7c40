"""The burst scenario's report: a table of every step per system, the p99s side by side, how
each pool grew and shrank, the verdict on issue 33's goal, and two charts (pool size over
time, p99 per step)."""

from . import method, report

# p99s this close are the same (1 ms or 5%, the larger): at 1 connection every system shows the sleep plus
# the shared machine's scheduling noise, and a verdict must not turn on that.
TIE_MS, TIE_SHARE = 1.0, 0.05
GOAL = [("ferry-fork", "fpm-dynamic"), ("ferry-exec", "fpm-dynamic")]


def per_step(runs, i, field):
    return method.summary([r["steps"][i][field] for r in runs])


def ms(s):
    return report.num(s["median"], 1) if s else "-"


def verdict(results, labels, levels, a, b):
    """(holds, line): is a's p99 at or under b's at every step (medians over the rounds, within the
    tie)? holds is None when one side has no pass."""
    if not results.get(a) or not results.get(b):
        return None, f"{labels.get(a, a)} against {labels.get(b, b)}: not measured (one side did not run)"
    worse = []
    for i, level in enumerate(levels):
        pa, pb = per_step(results[a], i, "p99_ms"), per_step(results[b], i, "p99_ms")
        if pa and pb and pa["median"] > pb["median"] + max(TIE_MS, TIE_SHARE * pb["median"]):
            worse.append(f"step {i + 1} ({level} connections: {pa['median']:.1f} ms against {pb['median']:.1f})")
    if worse:
        return False, f"{labels[a]}'s p99 is over {labels[b]}'s at " + ", ".join(worse)
    return True, f"{labels[a]}'s p99 is at or under {labels[b]}'s at every step"


def step_tables(sec, results, labels, levels):
    for key, runs in results.items():
        if not runs:
            continue
        rows = []
        for i, level in enumerate(levels):
            p99 = per_step(runs, i, "p99_ms")
            workers = per_step(runs, i, "workers_end")
            failed = per_step(runs, i, "failed")
            rows.append([i + 1, level, report.num(per_step(runs, i, "rps")["median"]), ms(per_step(runs, i, "p50_ms")),
                         f"**{ms(p99)}**", report.spread_cell(p99, 1), ms(per_step(runs, i, "max_ms")),
                         report.num(failed["median"]) if failed else "-",
                         report.num(workers["median"], 1 if workers["median"] % 1 else 0) if workers else "-"])
        sec.add(f"**{labels[key]}** ({len(runs)} pass(es)):", "")
        sec.table(["step", "connections", "req/s", "p50 ms", "p99 ms", "p99 min..max", "max ms", "failed",
                   "workers at end of step"], rows)


def p99_table(sec, results, labels, levels):
    keys = [k for k, runs in results.items() if runs]
    rows = []
    for i, level in enumerate(levels):
        rows.append([i + 1, level] + [ms(per_step(results[k], i, "p99_ms")) for k in keys])
    sec.add("p99 per step (ms, median over the rounds), side by side:", "")
    sec.table(["step", "connections"] + [labels[k] for k in keys], rows)


def pool_table(sec, results, labels):
    rows = []
    for key, runs in results.items():
        if not runs:
            continue
        most = method.summary([r["most"] for r in runs])
        back = [r["back_to_rest_s"] for r in runs]
        back_cell = ", ".join("never in the tail" if b is None else f"{b:.1f} s" for b in back)
        m = [r["metrics"] for r in runs if r["metrics"]]

        def mean(field):
            vals = [x[field] for x in m if x.get(field) is not None]
            return sum(vals) / len(vals) if vals else None
        rows.append([labels[key], report.num(most["median"]) if most else "-", runs[0]["rest"], back_cell,
                     report.num(mean("scale_up"), 1) if m else "-", report.num(mean("scale_down"), 1) if m else "-",
                     report.num(mean("spawn_ms_mean"), 1) if m else "-", report.num(mean("crash"), 1) if m else "-"])
    sec.add("How each pool moved (per pass; Ferry's columns from its `/metrics`, means over the passes): most "
            "workers seen, the count it returns to at rest, when it got back there after the last step, workers "
            "started to grow the pool (`scale_up`), retired to shrink it (`scale_down`), the mean boot time of "
            "every worker started (fork or exec), and crashes:", "")
    sec.table(["system", "most workers", "at rest", "back to rest after the last step", "scale_up spawns",
               "scale_down retirements", "spawn ms (mean)", "crashes"], rows)


def charts(ctx, sec, results, labels, levels, step_s):
    series = []
    marks = []
    for key, runs in results.items():
        if runs and runs[0]["samples"]:
            series.append({"label": labels[key], "points": [(round(t, 3), n) for t, n in runs[0]["samples"]]})
            if not marks:
                marks = [(st["start_s"], f"{st['connections']}c") for st in runs[0]["steps"]]
    sec.line_chart(ctx, "burst_pool.svg", "burst: PHP workers over time (first round)", "seconds since the first step",
                   "PHP worker processes", series, marks=marks,
                   note=f"dashed lines: step starts (connections); {step_s:g} s per step, then the idle tail")
    bars = []
    for i, level in enumerate(levels):
        for key, runs in results.items():
            s = per_step(runs, i, "p99_ms") if runs else None
            if s:
                bars.append({"label": labels[key], "value": s["median"], "lo": s["min"], "hi": s["max"],
                             "group": f"step {i + 1}: {level} connections"})
    sec.chart(ctx, "burst_p99.svg", "burst: p99 latency per step", "milliseconds", bars,
              note="lower is better; whiskers: min..max over the rounds")


def write(ctx, sec, results, labels, errors, opts):
    levels = opts["levels"]
    step_tables(sec, results, labels, levels)
    p99_table(sec, results, labels, levels)
    pool_table(sec, results, labels)
    for key, err in errors.items():
        sec.add(f"- **{labels.get(key, key)}**: failed: {err}")
    for a, b in GOAL:
        ok, line = verdict(results, labels, levels, a, b)
        sec.summary.append(line if ok is None else f"{'holds' if ok else 'does NOT hold'}: {line}")
    sec.add("", "**Issue 33's goal**, a burst absorbed with p99 under FPM's pm = dynamic on the same load (per "
            f"step, medians over the rounds, p99s within {TIE_MS:g} ms or {TIE_SHARE:.0%} counted as equal):", "")
    sec.add(*[f"- {s}" for s in sec.summary], "")
    charts(ctx, sec, results, labels, levels, opts["step_s"])
