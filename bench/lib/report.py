"""Markdown tables, SVG charts and results.json for one run."""

import json
import os
import platform
import subprocess

from . import proc, svg


class Section:
    """One scenario's outcome: status ok / not run / failed, markdown, data, summary lines."""

    def __init__(self, name, title):
        self.name = name
        self.title = title
        self.status = "ok"
        self.reason = None
        self.lines = []
        self.data = {}
        self.summary = []
        self.charts = []
        self.load = (None, None)  # 1-minute load average before and after the scenario

    def not_run(self, reason):
        self.status, self.reason = "not run", reason
        return self

    def failed(self, reason):
        self.status, self.reason = "failed", reason
        return self

    def summarize(self, ratios, prefix=""):
        """One summary line per measured ratio: median (min .. max)."""
        for r in ratios:
            if r.get("ratio"):
                self.summary.append(f"{prefix}{r['label']}: {r['ratio']['median']:.2f}x "
                                    f"({r['ratio']['min']:.2f} .. {r['ratio']['max']:.2f})")

    def add(self, *lines):
        self.lines.extend(lines)

    def table(self, headers, rows):
        self.lines.append("| " + " | ".join(headers) + " |")
        self.lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|")
        for r in rows:
            self.lines.append("| " + " | ".join(str(c) for c in r) + " |")
        self.lines.append("")

    def chart(self, ctx, filename, title, unit, bars, note=None):
        if not bars:
            return
        with open(os.path.join(ctx.out_dir, filename), "w") as f:
            f.write(svg.bar_chart(title, unit, bars, note=note))
        self.charts.append(filename)
        self.lines += [f"![{title}]({filename})", ""]

    def line_chart(self, ctx, filename, title, x_unit, y_unit, series, marks=(), note=None):
        if not any(s["points"] for s in series):
            return
        with open(os.path.join(ctx.out_dir, filename), "w") as f:
            f.write(svg.line_chart(title, x_unit, y_unit, series, marks=marks, note=note))
        self.charts.append(filename)
        self.lines += [f"![{title}]({filename})", ""]


def num(v, digits=0):
    if v is None:
        return "-"
    return f"{v:,.{digits}f}"


def spread_cell(s, digits=0):
    return "-" if not s else f"{num(s['min'], digits)} .. {num(s['max'], digits)}"


def ratio_cell(r):
    if not r:
        return "-"
    return f"**{r['median']:.2f}x** ({r['min']:.2f} .. {r['max']:.2f})"


def http_table(section, results):
    rows = []
    for r in results.values():
        if not r["iterations"]:
            rows.append([r["label"], "-", "-", "-", "-", "-", "-", "0", r["error"] or "no data"])
            continue
        rows.append([r["label"], num(r["rps"]["median"]), spread_cell(r["rps"]), num(r["p50_ms"]["median"], 2),
                     num(r["p99_ms"]["median"], 2), f"{r['failed_share']['median']:.2%}", cpu_cell(r),
                     f"{len(r['iterations'])} ({r['window']} used)",
                     settled_cell(r)])
    section.table(["system", "RPS (median)", "RPS min..max", "p50 ms", "p99 ms", "failed",
                   "CPU us/request (front + PHP)", "iterations", "settled"], rows)


def cpu_cell(r):
    """CPU time per request, median over the iterations used: every scenario's table has it,
    since it is what a request costs whatever else the machine was doing."""
    front, php = r.get("cpu_front_us"), r.get("cpu_php_us")
    if not front or not php:
        return "-"
    return f"{front['median'] + php['median']:.1f} ({front['median']:.1f} + {php['median']:.1f})"


def cpu_table(section, results):
    """CPU time per request, median over the iterations used, front and PHP apart."""
    rows = []
    for r in results.values():
        front, php = r.get("cpu_front_us"), r.get("cpu_php_us")
        if not front or not php:
            continue
        f, p = front["median"], php["median"]
        rows.append([r["label"], f"{f:.1f}", f"{p:.1f}" if p else "-", f"{f + p:.1f}"])
    section.table(["system", "front (server) us", "PHP processes us", "total us"], rows)


def settled_cell(r):
    if r["error"]:
        return "**FAILED**: " + r["error"]
    if r.get("quick"):
        return "- (quick)"
    return "yes" if r["settled"] else "**no**"


def ratio_table(section, ratios):
    rows = [[r["label"], ratio_cell(r["ratio"]) if r.get("ratio") else "not available: " + r.get("reason", "")]
            for r in ratios]
    section.table(["ratio (paired per round)", "median (min .. max)"], rows)


def rps_bars(results, group=None):
    bars = []
    for r in results.values():
        if r["rps"]:
            bars.append({"label": r["label"], "value": r["rps"]["median"], "lo": r["rps"]["min"],
                         "hi": r["rps"]["max"], "group": group})
    return bars


def environment(root):
    def out(argv):
        try:
            res = subprocess.run(argv, capture_output=True, text=True, timeout=10, cwd=root)
            return (res.stdout or res.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "unknown"

    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cpus": os.cpu_count(), "kernel": platform.release(), "php": out(["php", "-v"]),
            "go": out(["go", "version"]), "nginx": out(["nginx", "-v"]), "wrk": out(["wrk", "-v"]),
            "ferry": out(["git", "describe", "--always", "--dirty"]), "python": platform.python_version()}


def write(ctx, sections, env, started_utc, duration_s, options):
    lines = [f"# Ferry benchmark report — {started_utc}", "",
             f"Run took {duration_s:.0f} s. Options: `{options}`.", "",
             "## Environment", ""]
    lines += [f"- **{k}**: {v}" for k, v in env.items()]
    lines += [f"- **PHP processes per system**: {ctx.workers}",
              f"- **wrk**: {ctx.threads} thread(s), {ctx.connections} connections unless a scenario says otherwise",
              f"- **scheduling**: {proc.scheduling()}"] + ctx.revisions.report_lines() + ctx.php84.report_lines() + [
              "", "## Method", "", ctx.settings.describe() + ".",
              "Ratios are computed per round (A and B measured back to back), then summarised as median "
              "(min .. max), so slow drift of the machine cancels out. Bars show the median; whiskers min..max.",
              "", "## Scenarios", "",
              "| scenario | status |", "|---|---|"]
    for s in sections:
        lines.append(f"| [{s.name}](#{s.name}) | {s.status}{': ' + s.reason if s.reason else ''} |")
    if ctx.failures:
        lines += ["", "## Failures", ""] + [f"- {f}" for f in ctx.failures]
    for s in sections:
        lines += ["", f"<a id=\"{s.name}\"></a>", f"## {s.name}: {s.title}", ""]
        if s.status != "ok":
            lines.append(f"**{s.status}**: {s.reason}")
            lines.append("")
        lines += s.lines
        if s.load[0] is not None and s.status != "not run":
            lines += [f"Machine load average (1 min, {os.cpu_count()} CPUs): {s.load[0]:.2f} before, "
                      f"{s.load[1]:.2f} after this scenario.", ""]
    with open(os.path.join(ctx.out_dir, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    doc = {"started_utc": started_utc, "duration_s": duration_s, "options": options, "environment": env,
           "method": vars(ctx.settings), "workers": ctx.workers, "threads": ctx.threads,
           "connections": ctx.connections, "shared_session": proc.SHARED_SESSION, "failures": ctx.failures,
           "scenarios": {s.name: {"title": s.title, "status": s.status, "reason": s.reason, "charts": s.charts,
                                  "load_average": s.load,
                                  "summary": s.summary, "data": s.data} for s in sections}}
    with open(os.path.join(ctx.out_dir, "results.json"), "w") as f:
        json.dump(doc, f, indent=2, default=str)
        f.write("\n")
