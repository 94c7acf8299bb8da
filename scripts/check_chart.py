#!/usr/bin/env python3
"""scripts/check_chart.py: render demo/revenue.html in headless Chromium and check it draws.

Two layers, neither depending on anti-aliasing or font rendering:

1. Geometry after layout.  A copy of the page gets a small probe script at its end, which reads
   what Chromium laid out (each plot area's box, each series' computed style, its vertices and
   points along its length mapped to the screen with getScreenCTM, the legend samples) and
   writes it as JSON into the DOM, read back through --dump-dom.  Every series must be there
   once, rendered, with one vertex per day of its plot, every vertex inside that plot, spanning
   it from the first day to the last; each legend sample must be drawn as its series is.  No
   two labels' boxes may overlap, and in a window 900 pixels wide (the probe's second
   reading) the page must not be wider than the window: the chart shrinks to fit.
2. Pixels.  A screenshot of the same copy (same window, scale factor 1), decoded here.  It must
   not be blank, and along each series, at the screen points the probe reported, a pixel whose
   nearest colour of the page's palette is the series' own must be found near most points: a
   series hidden under another element fails here.

Pinned: window size, device scale factor 1, no font hinting, DejaVu Sans (scripts/deps.sh
installs fonts-dejavu-core), a new empty profile per run.  Standard library only.

    check_chart.py [page.html]              check the page; exit status 0 when every check holds
    check_chart.py --self-test [page.html]  the page must pass, and copies of it with a fault
                                            planted each must fail, with the expected message
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

WIDTH, HEIGHT = 1280, 800
# the page must fit a window this narrow without scrolling sideways (the chart shrinks)
NARROW = 900
# every series the chart must draw, and the plot area it belongs in
SERIES = {"truth": "main", "published": "main", "append": "main", "backfill": "main",
          "correction": "correction"}
MIN_DAYS = 30
# share of the points along a series near which its own colour must be seen: lines that run
# on top of one another hide part of the one below (published under the backfill in the month
# that was already right, under the append line's dashes elsewhere)
MIN_SEEN = 0.5
# a pixel counts as a palette colour only this close to it (Euclidean, 0..441)
NEAR = 40

PROBE = r"""
<script>
(function () {
  var out = {viewport: [innerWidth, innerHeight], dpr: devicePixelRatio, plots: {}, series: [],
             legend: {}, palette: []};
  var rgb = function (c) { var m = /rgba?\(([\d.]+), ([\d.]+), ([\d.]+)(?:, ([\d.]+))?\)/.exec(c || '');
    return m && (m[4] === undefined || +m[4] > 0.99) ? [+m[1], +m[2], +m[3]] : null; };
  var box = function (e) { var b = e.getBoundingClientRect(); return [b.left, b.top, b.width, b.height]; };
  var opacity = function (e) { var o = 1; for (; e && e.nodeType === 1; e = e.parentNode) {
    var s = getComputedStyle(e); o *= +s.opacity; if (s.display === 'none') return 0; } return o; };
  var screen = function (e, x, y) { var p = new DOMPoint(x, y).matrixTransform(e.getScreenCTM());
    return [Math.round(p.x * 10) / 10, Math.round(p.y * 10) / 10]; };
  var seen = {};
  var add = function (c) { if (c && !seen[c]) { seen[c] = 1; out.palette.push(c); } };
  add(rgb(getComputedStyle(document.body).backgroundColor) || [255, 255, 255]);
  document.querySelectorAll('svg *').forEach(function (e) {
    var s = getComputedStyle(e);
    if (s.visibility !== 'visible' || opacity(e) < 0.99 || !e.getClientRects().length) return;
    if (+s.fillOpacity > 0.99) add(rgb(s.fill));
    if (+s.strokeOpacity > 0.99) add(rgb(s.stroke));
  });
  document.querySelectorAll('[data-plot]').forEach(function (e) {
    out.plots[e.dataset.plot] = {box: box(e), days: +e.dataset.days || 0};
  });
  document.querySelectorAll('[data-series]').forEach(function (e) {
    var s = getComputedStyle(e), r = {name: e.dataset.series, plot: e.dataset.in || '',
      box: box(e), rendered: e.getClientRects().length > 0, visibility: s.visibility, opacity: opacity(e),
      stroke: rgb(s.stroke), strokeOpacity: +s.strokeOpacity, width: parseFloat(s.strokeWidth),
      dash: s.strokeDasharray, vertices: [], samples: []};
    if (e.points) for (var i = 0; i < e.points.numberOfItems; i++) {
      var p = e.points.getItem(i); r.vertices.push(screen(e, p.x, p.y)); }
    if (e.getTotalLength) { var len = e.getTotalLength();
      for (var d = 0; d <= len; d += 2) { var q = e.getPointAtLength(d); r.samples.push(screen(e, q.x, q.y)); } }
    out.series.push(r);
  });
  document.querySelectorAll('[data-legend]').forEach(function (e) {
    var s = getComputedStyle(e);
    out.legend[e.dataset.legend] = {stroke: rgb(s.stroke), width: parseFloat(s.strokeWidth), dash: s.strokeDasharray,
                                    rendered: e.getClientRects().length > 0 && opacity(e) > 0.99};
  });
  out.texts = [];
  document.querySelectorAll('svg text').forEach(function (e) {
    if (e.getClientRects().length && opacity(e) > 0.99) out.texts.push([e.textContent, box(e)]); });
  out.scrollWidth = document.documentElement.scrollWidth;
  var t = document.createElement('script');
  t.type = 'application/json'; t.id = 'chart-check-probe'; t.textContent = JSON.stringify(out);
  document.documentElement.appendChild(t);
})();
</script>
"""


def chromium(args, workdir, width=None):
    """Run headless Chromium with a new empty profile and the pinned rendering flags."""
    width = width or WIDTH
    profile = tempfile.mkdtemp(prefix="profile.", dir=workdir)
    cmd = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--hide-scrollbars", "--force-device-scale-factor=1", "--font-render-hinting=none",
           "--window-size=%d,%d" % (width, HEIGHT), "--user-data-dir=" + profile] + args
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120, check=True).stdout
    shutil.rmtree(profile, ignore_errors=True)
    return out


def read_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, ctype, _, _, interlace = ihdr
    assert depth == 8 and ctype in (2, 6) and interlace == 0, "unexpected PNG format %r" % (ihdr,)
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        ftype, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 0xFF
            elif ftype == 2:
                line[x] = (line[x] + b) & 0xFF
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xFF
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 0xFF
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return width, height, rows


def render(html, work):
    """(probe, (width, height, rows)) of the page: its layout as the probe saw it, its screenshot."""
    page = os.path.join(work, "page.html")
    with open(page, "w", encoding="utf-8") as f:
        f.write(html + PROBE)
    probe = dump(page, work, WIDTH)
    if probe is not None:
        narrow = dump(page, work, NARROW)
        probe["narrow"] = [NARROW, narrow["scrollWidth"] if narrow else None]
    shot = os.path.join(work, "chart.png")
    chromium(["--screenshot=" + shot, "file://" + page], work)
    return probe, read_png(shot)


def dump(page, work, width):
    """The probe's findings on page in a window width pixels wide, or None."""
    dom = chromium(["--dump-dom", "file://" + page], work, width).decode("utf-8", "replace")
    m = re.search(r'<script type="application/json" id="chart-check-probe">(.*?)</script>', dom, re.S)
    return json.loads(m.group(1)) if m else None


def overlap(a, b):
    """Whether two boxes (left, top, width, height) share more than a pixel's edge."""
    return (min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]) > 1 and
            min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]) > 1)


def check_text(probe):
    """Failures of the page's words: labels on one another, a page wider than a narrow window."""
    failures = []
    texts = probe.get("texts", [])
    for i, (ta, ba) in enumerate(texts):
        for tb, bb in texts[i + 1:]:
            if overlap(ba, bb):
                failures.append("labels overlap: %r and %r" % (ta, tb))
    width, scroll = probe.get("narrow", [NARROW, None])
    if scroll is None or scroll > width:
        failures.append("at %d px wide the page scrolls sideways (%r px wide)" % (width, scroll))
    return failures


def inside(pt, box, slack=1.0):
    x, y = pt
    return box[0] - slack <= x <= box[0] + box[2] + slack and box[1] - slack <= y <= box[1] + box[3] + slack


def check_geometry(probe):
    """Failures of the laid-out page: plots, series, legend."""
    if probe is None:
        return ["the probe found no page to read (the page did not load)"]
    failures = []
    # the page's layout depends on the window's width only (with --dump-dom, Chromium's
    # window is shorter than with --screenshot): the plots must fit in the screenshot's size
    if probe["viewport"][0] != WIDTH or probe["dpr"] != 1:
        failures.append("window %r at scale %r, not %d wide at 1" % (probe["viewport"], probe["dpr"], WIDTH))
    view = [0, 0, WIDTH, HEIGHT]
    for name in sorted(set(SERIES.values())):
        plot = probe["plots"].get(name)
        if plot is None:
            failures.append("plot %s: missing" % name)
        elif plot["box"][2] < 100 or plot["box"][3] < 50 or plot["days"] < MIN_DAYS:
            failures.append("plot %s: %r, %d days" % (name, plot["box"], plot["days"]))
        elif not (inside(plot["box"][:2], view, 0) and inside([plot["box"][0] + plot["box"][2], plot["box"][1] + plot["box"][3]], view, 0)):
            failures.append("plot %s: %r, not inside the %dx%d window" % (name, plot["box"], WIDTH, HEIGHT))
    background = tuple(probe["palette"][0])
    for name, plot_name in SERIES.items():
        found = [s for s in probe["series"] if s["name"] == name]
        if len(found) != 1:
            failures.append("series %s: missing" % name if not found else "series %s: drawn %d times" % (name, len(found)))
            continue
        s = found[0]
        plot = probe["plots"].get(plot_name)
        if s["plot"] != plot_name:
            failures.append("series %s: in plot %r, not %r" % (name, s["plot"], plot_name))
        if not s["rendered"] or s["visibility"] != "visible" or s["opacity"] < 0.99 or s["strokeOpacity"] < 0.99:
            failures.append("series %s: not rendered (visibility %s, opacity %s, stroke opacity %s)" %
                            (name, s["visibility"], s["opacity"], s["strokeOpacity"]))
        if s["stroke"] is None or s["width"] < 1 or distance(s["stroke"], background) < 60:
            failures.append("series %s: stroke %r, width %r, against background %r" % (name, s["stroke"], s["width"], background))
        if plot is None:
            continue
        n = len(s["vertices"])
        if n != plot["days"]:
            failures.append("series %s: %d points, its plot has %d days" % (name, n, plot["days"]))
        out = [v for v in s["vertices"] if not inside(v, plot["box"])]
        if out:
            failures.append("series %s: %d of %d points outside plot %s %r, e.g. %r" %
                            (name, len(out), n, plot_name, plot["box"], out[0]))
        xs = [v[0] for v in s["vertices"]]
        if n and (any(b <= a for a, b in zip(xs, xs[1:])) or abs(xs[0] - plot["box"][0]) > 1
                  or abs(xs[-1] - plot["box"][0] - plot["box"][2]) > 1):
            failures.append("series %s: its days do not run left to right across plot %s (x from %s to %s)" %
                            (name, plot_name, xs[0], xs[-1]))
    colours = [tuple(s["stroke"]) for s in probe["series"] if s["stroke"]]
    if len(set(colours)) != len(colours):
        failures.append("two series share a colour: %r" % colours)
    for s in probe["series"]:
        if SERIES.get(s["name"]) != "main":
            continue
        legend = probe["legend"].get(s["name"])
        if legend is None or not legend["rendered"]:
            failures.append("legend %s: missing" % s["name"])
        elif (legend["stroke"], legend["width"], legend["dash"]) != (s["stroke"], s["width"], s["dash"]):
            failures.append("legend %s: drawn %r, the series %r" % (s["name"], (legend["stroke"], legend["width"], legend["dash"]),
                                                                     (s["stroke"], s["width"], s["dash"])))
    return failures


def distance(p, q):
    return sum((a - b) ** 2 for a, b in zip(p, q)) ** 0.5


def check_pixels(probe, image):
    """Failures of the screenshot: blank, or a series' colour not seen along it."""
    width, height, rows = image
    failures, seen = [], {}
    counts = {}
    for row in rows:
        for p in row:
            counts[p] = counts.get(p, 0) + 1
    top = max(counts.values())
    if top > 0.97 * width * height or len(counts) < 8:
        failures.append("the screenshot is blank: %d colours, %d of %d pixels the same" % (len(counts), top, width * height))
    if probe is None:
        return failures, seen
    if (width, height) != (WIDTH, HEIGHT):
        failures.append("screenshot %dx%d, not %dx%d" % (width, height, WIDTH, HEIGHT))
        return failures, seen
    palette = [tuple(c) for c in probe["palette"]]
    cache = {}

    def nearest(p):
        if p not in cache:
            d, c = min((distance(p, c), c) for c in palette)
            cache[p] = c if d <= NEAR else None
        return cache[p]

    for s in probe["series"]:
        if s["name"] not in SERIES or s["stroke"] is None or not s["samples"]:
            continue
        colour, r = tuple(s["stroke"]), int(s["width"] / 2) + 2
        hits = 0
        for x, y in s["samples"]:
            x, y = int(round(x)), int(round(y))
            if any(nearest(rows[j][i]) == colour
                   for j in range(max(y - r, 0), min(y + r + 1, height))
                   for i in range(max(x - r, 0), min(x + r + 1, width))):
                hits += 1
        seen[s["name"]] = hits / len(s["samples"])
        if seen[s["name"]] < MIN_SEEN:
            failures.append("series %s: its colour seen near %d of %d points along it (%.0f%%, at least %.0f%% needed)" %
                            (s["name"], hits, len(s["samples"]), 100 * seen[s["name"]], 100 * MIN_SEEN))
    return failures, seen


def check(html):
    """(failures, summary) of the page's HTML text."""
    with tempfile.TemporaryDirectory() as work:
        probe, image = render(html, work)
    failures = check_geometry(probe) + (check_text(probe) if probe else [])
    pixel_failures, seen = check_pixels(probe, image)
    summary = "%dx%d, %s, colour seen along %s" % (
        image[0], image[1],
        ", ".join("%s %d points" % (s["name"], len(s["vertices"])) for s in probe["series"]) if probe else "no probe",
        ", ".join("%s %.0f%%" % (k, 100 * v) for k, v in seen.items()) or "nothing")
    return failures + pixel_failures, summary


def plant(html, pattern, replacement, count=1):
    """html with pattern replaced; refuses to plant nothing."""
    new, n = re.subn(pattern, replacement, html, count=count, flags=re.S)
    if n == 0:
        raise ValueError("fault not planted: %r not found" % pattern)
    return new


def halve_points(m):
    points = m.group(2).split()
    return m.group(1) + " ".join(points[::2]) + m.group(3)


# name, how to plant it, a message the check must give (a regular expression)
FAULTS = [
    ("a series missing",
     lambda h: plant(h, r'<polyline [^>]*data-series="published"[^>]*/>', ""),
     r"^series published: missing$"),
    ("a blank page",
     lambda h: plant(h, r"<body>.*</body>", "<body></body>"),
     r"^the screenshot is blank"),
    ("a series drawn outside the plot",
     lambda h: plant(h, r'(<polyline [^>]*data-series="backfill")', r'\1 transform="translate(0,250)"'),
     r"^series backfill: (\d+) of \1 points outside plot main"),
    ("a series with too few points",
     lambda h: plant(h, r'(<polyline [^>]*data-series="append"[^>]* points=")([^"]*)(")', halve_points),
     r"^series append: \d+ points, its plot has \d+ days$"),
    ("a series hidden under another element",
     lambda h: plant(h, r"(</svg>)", r'<rect x="0" y="0" width="1140" height="410" fill="#ffffff"/>\1'),
     r"^series truth: its colour seen near \d+ of"),
    ("a chart of fixed width",
     lambda h: plant(h, r'<svg ([^>]*)width="100%"([^>]*) style="[^"]*"', r'<svg \1width="1140"\2'),
     r"^at 900 px wide the page scrolls sideways"),
    ("two labels on one another",
     lambda h: plant(h, r'(<text x="[^"]*" y="[^"]*")( font-size="11" text-anchor="end" fill="#666666">axis from)', r'<text x="230" y="394"\2'),
     r"^labels overlap: "),
    ("a legend sample not dashed like its series",
     lambda h: plant(h, r'(<line data-legend="append"[^>]*?) stroke-dasharray="[^"]*"', r"\1"),
     r"^legend append: drawn .*'none'"),
]


def self_test(html):
    """0 when the page passes and each planted fault is refused with its message."""
    ok = True
    failures, summary = check(html)
    print("self-test: the page as generated: %s (%s)" % ("passes" if not failures else "FAILS", summary))
    for f in failures:
        print("    " + f)
    ok = not failures
    for name, fault, expected in FAULTS:
        failures, _ = check(fault(html))
        hit = [f for f in failures if re.search(expected, f)]
        if hit:
            print("self-test: %s: refused (%d failures, e.g. %s)" % (name, len(failures), hit[0]))
        else:
            ok = False
            print("self-test: %s: NOT refused as expected (wanted %r, got %r)" % (name, expected, failures))
    return 0 if ok else 1


def main():
    args = sys.argv[1:]
    test = "--self-test" in args
    args = [a for a in args if a != "--self-test"]
    path = os.path.abspath(args[0] if args else "demo/revenue.html")
    with open(path, encoding="utf-8") as f:
        html = f.read()
    if test:
        return self_test(html)
    failures, summary = check(html)
    print("chart %s: %s" % (path, summary))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
