"""Scenarios that run another package's standalone PHP benchmark with --json=FILE and chart
whatever numbers it reports (bench/tarantool, bench/msgpack)."""

import json
import os
import re
import subprocess
import threading

from lib import report

PAIR_KEYS = ("median", "mean", "avg", "value")


class External:
    """interpreter: the command prefix; quick_args: the options that make the script short
    (default `--quick`); each must appear in the script's source to be used."""

    def __init__(self, name, title, script, note, interpreter=("php", "-d", "opcache.enable_cli=1"),
                 quick_args=("--quick",)):
        self.NAME = name
        self.TITLE = title
        self.script = script
        self.note = note
        self.interpreter = list(interpreter)
        self.quick_args = list(quick_args)

    def run(self, ctx):
        sec = report.Section(self.NAME, self.TITLE)
        path = os.path.join(ctx.root, self.script)
        if not os.path.isfile(path):
            return sec.not_run(f"{self.script} does not exist yet")
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
        # Options are detected in the script's own text: there is no other contract yet,
        # and passing an unknown flag could make it run a full-length benchmark by accident.
        if "--json" not in source:
            return sec.not_run(f"{self.script} has no --json option yet")
        missing = [a for a in self.quick_args if a.startswith("--") and a not in source]
        if ctx.quick and missing:
            return sec.not_run(f"{self.script} has no {', '.join(missing)} option, skipped in quick mode")
        out = ctx.path(self.NAME, "result.json")
        argv = self.interpreter + [self.script, f"--json={out}"]
        if ctx.quick:
            argv += self.quick_args
        ctx.progress("running " + " ".join(argv))
        code, stdout, stderr = run_streaming(argv, ctx, timeout=120 if ctx.quick else 3600)
        if code is None:
            return sec.not_run(f"`{' '.join(argv)}` did not finish in time")
        if code != 0:
            return sec.not_run(f"`{' '.join(argv)}` exited {code}: {why(stderr + stdout)}")
        try:
            with open(out) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            return sec.not_run(f"`{' '.join(argv)}` wrote no readable JSON to --json: {e}")
        sec.add(self.note, "", f"Command: `{' '.join(argv)}` (from the repository root).", "")
        sec.add(*[f"- **{k}**: {v}" for k, v in metadata(doc)], "")
        rows = flatten({k: v for k, v in doc.items() if k not in META_KEYS} if isinstance(doc, dict) else doc)
        if not rows:
            return sec.not_run(f"{self.script} --json output holds no numbers")
        groups = {}
        for label, vals, spread in disambiguate(rows):
            group, _, rest = label.partition(" / ")
            groups.setdefault(group, []).append((rest or group, vals, spread))
        for group, grows in groups.items():
            metrics = []
            for _, vals, _ in grows:
                metrics += [k for k in vals if k not in metrics]
            sec.add(f"### {group}", "")
            sec.table(["case"] + metrics, [[lb] + [fmt(v.get(m)) for m in metrics] for lb, v, _ in grows])
            for m in chart_metrics(grows, metrics):
                bars = []
                for label, vals, spread in grows:
                    if m not in vals:
                        continue
                    bar = {"label": label[-40:], "value": vals[m]}
                    if spread and m == main_metric(vals):
                        bar.update(lo=spread[0], hi=spread[1])
                    elif m in PAIR_KEYS and "min" in vals and "max" in vals:
                        bar.update(lo=vals["min"], hi=vals["max"])
                    bars.append(bar)
                sec.chart(ctx, f"{self.NAME}_{safe(group)}_{safe(m)}.svg", f"{self.NAME} {group}: {m}", m, bars)
        sec.data = {"command": argv, "json": doc}
        sec.summary.append(f"{len(rows)} cases charted from {self.script}")
        return sec


def run_streaming(argv, ctx, timeout):
    """Runs a script whose progress goes to stderr: each stderr line is shown as it comes
    (these scripts run for minutes), and both streams are kept for the error message.
    Returns (exit code or None on timeout, stdout, stderr)."""
    proc = subprocess.Popen(argv, cwd=ctx.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)
    reader.start()
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    err = []
    try:
        for line in proc.stderr:
            err.append(line)
            if line.strip():
                ctx.progress("  " + line.rstrip())
        code = proc.wait()
    finally:
        timed_out = not timer.is_alive()
        timer.cancel()
    reader.join()
    return (None if timed_out else code), "".join(out), "".join(err)


META_KEYS = ("meta", "env", "environment", "config")
SAMPLES = re.compile(r"(^|_)(samples|runs)$")
SPREADS = re.compile(r"(^|_)(stdev|std|min|max|spread)($|_)")  # tabled, not charted
MEASURES = re.compile(r"(^|_)(per_sec|rps|ops|ns|us|ms|ratio|median|mean|avg|value|time|seconds|throughput)($|_)",
                      re.I)


def metadata(doc):
    """Top-level scalars, and everything under meta/env/environment/config."""
    if not isinstance(doc, dict):
        return []
    out = [(k, v) for k, v in doc.items() if isinstance(v, (str, bool, int, float))]
    for key in META_KEYS:
        if isinstance(doc.get(key), dict):
            out += [(k, v) for k, v in doc[key].items() if isinstance(v, (str, bool, int, float))]
    return out


def why(output):
    """The line that explains a PHP failure (the uncaught exception), else the last lines."""
    lines = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    for ln in lines:
        if "Fatal error" in ln or "Uncaught" in ln:
            return ln[:400]
    return " / ".join(lines[-3:])[:400] or "no output"


def flatten(doc, path=()):
    """[(label, {metric: number}, (min, max) of its samples or None)]: every object holding
    numbers directly is one row, labelled by its path, with a list item named by its own
    short string fields (op, mode, codec...) instead of its index."""
    rows = []
    if isinstance(doc, dict):
        nums = {k: float(v) for k, v in doc.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        words = [v for v in doc.values() if isinstance(v, str) and 0 < len(v) <= 40]
        here = path
        if words and path and path[-1].isdigit():
            here = path[:-1] + (" ".join(words),)
        samples = []
        for k, v in doc.items():
            if SAMPLES.search(k) and isinstance(v, list):
                samples += [x for x in v if isinstance(x, (int, float)) and not isinstance(x, bool)]
        if nums and here and len(nums) == len(doc) and len(nums) >= 4:
            # A flat name -> number map (a list of ratios, say): one row per name.
            rows += [(" / ".join(here + (k,)), {"value": v}, None) for k, v in nums.items()]
        elif nums and here:
            rows.append((" / ".join(here), nums, (min(samples), max(samples)) if samples else None))
        for k, v in doc.items():
            if isinstance(v, (dict, list)) and not SAMPLES.search(k):
                rows += flatten(v, here + (str(k),))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            if isinstance(v, (dict, list)):
                rows += flatten(v, path + (str(i),))
    return rows


def disambiguate(rows):
    """Rows sharing a label (same op, different fiber count, say) get the numeric
    parameters that tell them apart appended: "select fibers=10"."""
    by_label = {}
    for r in rows:
        by_label.setdefault(r[0], []).append(r)
    out = []
    for label, vals, spread in rows:
        same = by_label[label]
        if len(same) > 1:
            params = [k for k in vals if not MEASURES.search(k) and len({str(o[1].get(k)) for o in same}) > 1]
            label += " " + " ".join(f"{k}={vals[k]:g}" for k in params)
        out.append((label, vals, spread))
    return out


def main_metric(vals):
    return next((m for m in vals if MEASURES.search(m)), None)


def chart_metrics(rows, metrics, limit=3):
    """Metrics worth a chart: measures (rates, times, ratios) shared by at least two cases."""
    out = [m for m in metrics if MEASURES.search(m) and not SPREADS.search(m)
           and sum(1 for _, v, _ in rows if m in v) >= 2]
    return out[:limit]


def fmt(v):
    if v is None:
        return "-"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def safe(name):
    return "".join(c if c.isalnum() else "_" for c in name)[:40]


TARANTOOL = External(
    "tarantool", "php/tarantool connector against a real Tarantool (bench/tarantool/bench.php)",
    os.path.join("bench", "tarantool", "bench.php"),
    "Requests per second of the pure-PHP Tarantool connector, as measured and reported by "
    "bench/tarantool/bench.php (revolutions, iterations until settled).")
VOTING = External(
    "voting", "voting example under wrk: Ferry vs nginx+FPM (examples/voting/bench.py)",
    os.path.join("examples", "voting", "bench.py"),
    "The voting service's own load test (it starts Tarantool, Ferry and nginx+FPM itself); see "
    "examples/voting/README.md for what each system is.",
    interpreter=("python3",),
    quick_args=("--duration", "1", "--warmup", "0", "--rounds", "1", "--wal", "none",
                "--systems", "ferry,fpm-persistent"))
MSGPACK = External(
    "msgpack", "php/msgpack codec against ext-msgpack (bench/msgpack/bench.php)",
    os.path.join("bench", "msgpack", "bench.php"),
    "Pack/unpack throughput of the pure-PHP codec and ext-msgpack, as reported by bench/msgpack/bench.php.")
