"""relay: one job round trip Go -> PHP worker -> Go per transport (internal/pool's
BenchmarkEcho), free to use both CPUs and pinned to CPU 0 with taskset."""

import os
import re
import shutil
import subprocess

from lib import method, report
from lib.proc import StartError

NAME = "relay"
TITLE = "job round trip per transport (go test -bench Echo), unpinned vs pinned to one CPU"
SEED_003_US = {"pipes": 15, "unix": 18, "tcp": 25}
LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+(\d+)\s+([0-9.]+) ns/op", re.M)


def parse(text):
    """{'Echo/pipes': ns, ...} from `go test -bench` output; raises when nothing matched."""
    out = {m.group(1): float(m.group(3)) for m in LINE.finditer(text)}
    if not out:
        raise StartError("no benchmark line in go test output:\n" + text[-1500:])
    return out


def run(ctx):
    sec = report.Section(NAME, TITLE)
    count = 2000 if ctx.quick else 20000
    pinned_ok = shutil.which("taskset") is not None
    sec.add(f"`go test ./internal/pool -run XXX -bench Echo -benchtime {count}x`, compiled once with "
            "`go test -c` and run from internal/pool. One iteration = one run of every Echo benchmark; "
            "the unpinned and pinned (`taskset -c 0`, inherited by the PHP workers) runs alternate. "
            "Cross-core wake-ups are what pinning removes.", "")
    binary = ctx.path("bin", "pool.test")
    ctx.progress("go test -c ./internal/pool")
    ctx.run(["go", "test", "-c", "-o", binary, "./internal/pool"])
    args = [binary, "-test.run", "XXX", "-test.bench", "Echo", "-test.benchtime", f"{count}x"]
    variants = {"unpinned": args}
    if pinned_ok:
        variants["pinned"] = ["taskset", "-c", "0"] + args
    else:
        sec.add("- pinned runs skipped: `taskset` is not installed", "")

    def measure(name):
        res = subprocess.run(variants[name], cwd=os.path.join(ctx.root, "internal", "pool"),
                             capture_output=True, text=True, timeout=600)
        if res.returncode != 0:
            raise StartError(f"{' '.join(variants[name])} exited {res.returncode}:\n{(res.stdout + res.stderr)[-1500:]}")
        ns = parse(res.stdout)
        serial = [v for k, v in ns.items() if k.startswith("Echo/")]
        return {"ns": ns, "total_ns": sum(serial)}

    state = method.alternate(list(variants), measure, ctx.settings, "total_ns", ctx.progress)
    for name, st in state.items():
        if st["error"]:
            ctx.fail(f"relay {name}: {st['error']}")
    if not any(st["iterations"] for st in state.values()):
        return sec.failed("; ".join(st["error"] or "no data" for st in state.values()))

    cases = []
    for st in state.values():
        for it in st["iterations"]:
            cases += [c for c in it["ns"] if c not in cases]
    stats = {}
    for name, st in state.items():
        win = method.window_of(st, ctx.settings)
        stats[name] = {c: method.summary([it["ns"].get(c) for it in win]) for c in cases}
    rows, bars = [], []
    for c in cases:
        transport = c.split("/", 1)[1] if "/" in c else c
        u, p = stats.get("unpinned", {}).get(c), stats.get("pinned", {}).get(c)
        ratio = pinned_ratio(state, c, ctx.settings)
        ref = f"{SEED_003_US[transport]} us" if transport in SEED_003_US and c.startswith("Echo/") else "-"
        rows.append([c, us_cell(u), us_cell(p), report.ratio_cell(ratio), ref])
        for name, s in (("unpinned", u), ("pinned (CPU 0)", p)):
            if s:
                bars.append({"label": name, "value": s["median"] / 1000, "lo": s["min"] / 1000,
                             "hi": s["max"] / 1000, "group": c,
                             "color": "#2b6cb0" if name == "unpinned" else "#dd6b20"})
        if u:
            sec.summary.append(f"{c}: {u['median'] / 1000:.1f} us unpinned"
                               + (f", {p['median'] / 1000:.1f} us pinned" if p else ""))
    sec.table(["benchmark", "unpinned us/op (median, min..max)", "pinned us/op", "pinned / unpinned",
               "C relay talk"], rows)
    settled = ", ".join(f"{n}: {'settled' if st['settled'] else 'not settled'} after {len(st['iterations'])}"
                        for n, st in state.items())
    sec.add(f"Iterations: {settled} (settling on the sum of the serial Echo cases).", "")
    sec.chart(ctx, "relay.svg", "relay: one job round trip", "microseconds per job (lower is better)", bars)
    sec.data = {"benchtime": count, "stats_ns": stats,
                "iterations": {n: {"ns": [it["ns"] for it in st["iterations"]], "settled": st["settled"],
                                   "error": st["error"]} for n, st in state.items()}}
    return sec


def us_cell(s):
    if not s:
        return "-"
    return f"{s['median'] / 1000:.1f} ({s['min'] / 1000:.1f} .. {s['max'] / 1000:.1f})"


def pinned_ratio(state, case, settings):
    if "pinned" not in state or not state["pinned"]["iterations"] or not state["unpinned"]["iterations"]:
        return None
    per_case = {}
    for name in ("pinned", "unpinned"):
        st = state[name]
        per_case[name] = {"iterations": [{"v": it["ns"].get(case)} for it in st["iterations"]],
                          "rounds": st["rounds"], "settled": st["settled"]}
    return method.paired_ratios(per_case["pinned"], per_case["unpinned"], "v", settings)
