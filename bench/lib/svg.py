"""A small SVG writer for horizontal bar charts with min..max error bars (no network,
no plotting library: the report must build on a bare machine)."""

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
