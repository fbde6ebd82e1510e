"""make bench's chart: accepted events/s and p99 per connection count,
one line per server and mode, with the ceilings as lines.

    chart.write(bench, "build/bench/chart.svg")

Hand-written SVG (no plotting library): two panels side by side, the
connection counts as evenly spaced categories, throughput and p99 both on
logarithmic scales (the null program's tens of thousands of requests
beside the receivers' thousands of events, mod_fcgid's one-second waits
beside milliseconds).  Ceilings: the storage ceiling (one durable commit
per event) as a flat line, each server's null FastCGI program as a dashed
line over the connection counts.
"""

import math
from xml.sax.saxutils import escape

W = 960
PANEL_W, PANEL_H = 380, 300
LEFT1, LEFT2, TOP = 80, 560, 50
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
          "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22")


def series_key(bench, r):
    k = bench.label(r)
    if r.get("store") == "postgresql":
        k += ", PostgreSQL"
    return "%s %s %s" % (k, r["sync"], r["mode"])


def nice_max(v):
    """A round number at or above v for the axis."""
    if v <= 0:
        return 1
    e = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if v <= m * e:
            return m * e
    return 10 * e


def text(x, y, s, size=12, anchor="start", color="#222", extra=""):
    return ('<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s" '
            'fill="%s"%s>%s</text>' % (x, y, size, anchor, color, extra,
                                       escape(s)))


def line(points, color, width=2, dash=None):
    d = " ".join("%.1f,%.1f" % p for p in points)
    return ('<polyline points="%s" fill="none" stroke="%s" '
            'stroke-width="%s"%s/>' % (d, color, width,
                                       ' stroke-dasharray="%s"' % dash
                                       if dash else ""))


def panel(out, left, title, conns, series, lines, ymin, ymax, log=False,
          unit=""):
    """One panel: series {name: (color, {conns: y})}, lines [(name,
    color, dash, y or {conns: y})], from ymin to ymax."""
    out.append(text(left + PANEL_W / 2, TOP - 16, title, 14, "middle",
                    extra=' font-weight="bold"'))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" '
               'stroke="#999"/>' % (left, TOP, PANEL_W, PANEL_H))
    if log:
        lo = 10 ** math.floor(math.log10(max(ymin, 1e-3)))
        hi = 10 ** math.ceil(math.log10(max(ymax, lo * 10)))

        def yof(v):
            v = max(v, lo)
            return TOP + PANEL_H * (1 - (math.log10(v) - math.log10(lo))
                                    / (math.log10(hi) - math.log10(lo)))
        ticks = [10 ** k for k in range(int(math.log10(lo)),
                                        int(math.log10(hi)) + 1)]
    else:
        hi = nice_max(ymax)

        def yof(v):
            return TOP + PANEL_H * (1 - v / hi)
        ticks = [hi * k / 5 for k in range(6)]
    for t in ticks:
        y = yof(t)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" '
                   'stroke="#eee"/>' % (left, y, left + PANEL_W, y))
        out.append(text(left - 6, y + 4, ("%g" % t) + unit, 11, "end"))
    n = len(conns)

    def xof(c):
        return left + PANEL_W * (conns.index(c) + 0.5) / n
    for c in conns:
        out.append(text(xof(c), TOP + PANEL_H + 16, str(c), 11, "middle"))
    out.append(text(left + PANEL_W / 2, TOP + PANEL_H + 34,
                    "connections", 12, "middle"))
    for name, color, dash, y in lines:
        if isinstance(y, dict):
            pts = [(xof(c), yof(y[c])) for c in conns if c in y]
            if pts:
                out.append(line(pts, color, 1.5, dash))
        elif y:
            out.append(line([(left, yof(y)), (left + PANEL_W, yof(y))],
                            color, 1.5, dash))
    for name, (color, pts) in series.items():
        xy = [(xof(c), yof(pts[c])) for c in conns if c in pts]
        if len(xy) > 1:
            out.append(line(xy, color))
        for x, y in xy:
            out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>'
                       % (x, y, color))


def write(bench, path):
    rows = [r for r in bench.rows if r["accepted_s"] is not None]
    conns = sorted({r["conns"] for r in bench.rows})
    if not rows or not conns:
        return
    series, p99 = {}, {}
    for r in rows:
        k = series_key(bench, r)
        if k not in series:
            color = COLORS[len(series) % len(COLORS)]
            series[k] = (color, {})
            p99[k] = (color, {})
        series[k][1][r["conns"]] = r["accepted_s"]
        p99[k][1][r["conns"]] = r["p99_ms"]
    lines = [("storage ceiling, FULL (1 process)", "#555", "6,3",
              bench.ceil.get("FULL"))]
    if bench.ceil.get("PG16"):
        lines.append(("PostgreSQL ceiling, 16 processes", "#8c564b", "2,3",
                      bench.ceil["PG16"]))
    for server, color in (("lighttpd", "#1f77b4"), ("Apache", "#d62728")):
        st = {r["conns"]: r["req_s"] for r in bench.rows
              if r["name"] == "null" and r["server"] == server
              and r["iface"] == "FastCGI"}
        if st:
            lines.append(("null FastCGI program (stack ceiling), %s"
                          % server, color, "8,4", st))
    vals = ([y for _, p in series.values() for y in p.values()]
            + [v for _, _, _, v in lines if isinstance(v, (int, float))
               and v]
            + [y for _, _, _, v in lines if isinstance(v, dict)
               for y in v.values()])
    lat = [y for _, p in p99.values() for y in p.values()] + [10.0]
    items = [(k, c, None) for k, (c, _) in series.items()]
    items += [(n, c, d) for n, c, d, _ in lines]
    items.append(("p99 target, 10 ms", "#999", "2,2"))
    y0 = TOP + PANEL_H + 60
    h = y0 + (len(items) + 1) // 2 * 18 + 24
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif">' % (W, h, W, h),
           '<rect width="100%" height="100%" fill="white"/>']
    panel(out, LEFT1, "accepted events/s (log scale)", conns, series,
          lines, max(min(vals), 1), max(vals), log=True)
    panel(out, LEFT2, "p99 latency (ms, log scale)", conns, p99,
          [("p99 target, 10 ms", "#999", "2,2", 10.0)], min(lat),
          max(lat), log=True)
    # The legend, two columns under the panels.
    for i, (name, color, dash) in enumerate(items):
        x = 40 + (i % 2) * 460
        y = y0 + (i // 2) * 18
        out.append(line([(x, y - 4), (x + 24, y - 4)], color, 2, dash))
        out.append(text(x + 30, y, name, 11))
    out.append(text(W / 2, h - 6, "make bench, %s" % bench.started.strftime(
        "%Y-%m-%d %H:%M %Z"), 10, "middle", "#777"))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
