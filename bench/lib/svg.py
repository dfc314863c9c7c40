"""A small SVG writer for horizontal bar charts with min..max error bars, and line charts of
a measure over a run (no network, no plotting library: the report must build on a bare
machine)."""

import math
from xml.sax.saxutils import escape

PALETTE = ["#2b6cb0", "#dd6b20", "#38a169", "#805ad5", "#d53f8c", "#718096", "#b7791f", "#319795"]


def nice_max(v):
    """The smallest 1/2/2.5/5 x 10^k at or above v, so the axis ends on a round number."""
    if v <= 0:
        return 1.0
    exp = math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if m * 10 ** exp >= v:
            return m * 10 ** exp
    return 10 ** (exp + 1)


def fmt(v):
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}"


def bar_chart(title, unit, bars, note=None, width=780):
    """bars: dicts with label, value and optional lo, hi (error bar), color, group.

    A change of `group` between consecutive bars starts a labelled block, which is how
    grouped series (one block per concurrency level, say) are drawn."""
    left, right, row, top = 250, 110, 24, 44
    plot_w = width - left - right
    rows = []
    group = None
    for b in bars:
        if b.get("group") is not None and b["group"] != group:
            group = b["group"]
            rows.append(("group", group))
        rows.append(("bar", b))
    height = top + row * len(rows) + 46 + (16 if note else 0)
    top_value = nice_max(max([b.get("hi") or b["value"] for b in bars] + [b["value"] for b in bars] + [0]))
    scale = plot_w / top_value

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">'
           f'{escape(title)}</text>']
    axis_y = top + row * len(rows)
    for i in range(6):
        v = top_value * i / 5
        x = left + v * scale
        out.append(f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{axis_y}" stroke="#e2e8f0"/>')
        out.append(f'<text x="{x:.1f}" y="{axis_y + 15}" text-anchor="middle" fill="#4a5568">{fmt(v)}</text>')
    out.append(f'<text x="{left + plot_w / 2}" y="{axis_y + 32}" text-anchor="middle" fill="#4a5568">'
               f'{escape(unit)} (bar = median, whisker = min..max)</text>')
    if note:
        out.append(f'<text x="{left + plot_w / 2}" y="{axis_y + 48}" text-anchor="middle" fill="#718096" '
                   f'font-size="11">{escape(note)}</text>')
    colors = {}
    for i, (kind, item) in enumerate(rows):
        y = top + i * row
        if kind == "group":
            out.append(f'<text x="8" y="{y + 16}" font-weight="bold">{escape(str(item))}</text>')
            continue
        b = item
        color = b.get("color") or colors.setdefault(b["label"], PALETTE[len(colors) % len(PALETTE)])
        w = max(b["value"] * scale, 0.5)
        out.append(f'<text x="{left - 8}" y="{y + 16}" text-anchor="end">{escape(b["label"])}</text>')
        out.append(f'<rect x="{left}" y="{y + 4}" width="{w:.1f}" height="{row - 8}" fill="{color}">'
                   f'<title>{escape(b["label"])}: {fmt(b["value"])}</title></rect>')
        end = left + w
        if b.get("lo") is not None and b.get("hi") is not None:
            x1, x2, ym = left + b["lo"] * scale, left + b["hi"] * scale, y + row / 2
            out.append(f'<line x1="{x1:.1f}" y1="{ym}" x2="{x2:.1f}" y2="{ym}" stroke="#1a202c" stroke-width="1.5"/>')
            for x in (x1, x2):
                out.append(f'<line x1="{x:.1f}" y1="{ym - 5}" x2="{x:.1f}" y2="{ym + 5}" stroke="#1a202c" '
                           f'stroke-width="1.5"/>')
            end = max(end, x2)
        out.append(f'<text x="{end + 6:.1f}" y="{y + 16}" fill="#1a202c">{fmt(b["value"])}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def line_chart(title, x_unit, y_unit, series, marks=(), note=None, width=780, height=360):
    """series: dicts with label, points [(x, y), ...] and optional color, drawn as lines
    over a shared axis starting at 0 for x; y starts at the lowest value's round number
    below, so a few percent of change stays visible. marks: (x, label) vertical lines."""
    per_row = 4  # legend entries per line
    legend_y = 40 + (16 if note else 0)  # below the plot: tick labels, the x unit, the note
    left, right, top = 70, 20, 44
    bottom = legend_y + 18 * -(-len(series) // per_row) + 6
    plot_w, plot_h = width - left - right, height - top - bottom
    pts = [p for s in series for p in s["points"]]
    if not pts:
        raise ValueError("line_chart: no points")
    x_top = nice_max(max(x for x, _ in pts))
    y_lo, y_hi = min(y for _, y in pts), max(y for _, y in pts)
    span = nice_max((y_hi - y_lo) or abs(y_hi) * 0.1 or 1)
    step = span / 5
    y_bottom = math.floor(y_lo / step) * step
    y_top = y_bottom + step * math.ceil((y_hi - y_bottom) / step if y_hi > y_bottom else 1)

    def px(x):
        return left + x / x_top * plot_w

    def py(y):
        return top + plot_h - (y - y_bottom) / (y_top - y_bottom) * plot_h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">'
           f'{escape(title)}</text>']
    ticks = int(round((y_top - y_bottom) / step))
    for i in range(ticks + 1):
        v = y_bottom + step * i
        y = py(v)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#e2e8f0"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#4a5568">{fmt(v)}</text>')
    for i in range(6):
        v = x_top * i / 5
        x = px(v)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" stroke="#e2e8f0"/>')
        out.append(f'<text x="{x:.1f}" y="{top + plot_h + 15}" text-anchor="middle" fill="#4a5568">{fmt(v)}</text>')
    out.append(f'<text x="{left + plot_w / 2}" y="{top + plot_h + 32}" text-anchor="middle" fill="#4a5568">'
               f'{escape(x_unit)}</text>')
    out.append(f'<text x="14" y="{top + plot_h / 2}" text-anchor="middle" fill="#4a5568" '
               f'transform="rotate(-90 14 {top + plot_h / 2})">{escape(y_unit)}</text>')
    if note:
        out.append(f'<text x="{left + plot_w / 2}" y="{top + plot_h + 48}" text-anchor="middle" fill="#718096" '
                   f'font-size="11">{escape(note)}</text>')
    for x, label in marks:
        out.append(f'<line x1="{px(x):.1f}" y1="{top}" x2="{px(x):.1f}" y2="{top + plot_h}" stroke="#a0aec0" '
                   f'stroke-dasharray="4 3"/>')
        out.append(f'<text x="{px(x) + 4:.1f}" y="{top + 12}" fill="#718096" font-size="11">{escape(label)}</text>')
    for i, s in enumerate(series):
        color = s.get("color") or PALETTE[i % len(PALETTE)]
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s["points"])
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.5">'
                   f'<title>{escape(s["label"])}</title></polyline>')
        lx = left + (i % per_row) * (plot_w // per_row)
        ly = top + plot_h + legend_y + 18 * (i // per_row) + 12
        out.append(f'<rect x="{lx}" y="{ly - 9}" width="12" height="3" fill="{color}"/>')
        out.append(f'<text x="{lx + 16}" y="{ly - 4}" fill="#1a202c">{escape(s["label"])}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
