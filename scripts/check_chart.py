#!/usr/bin/env python3
"""scripts/check_chart.py: render demo/revenue.html in headless Chromium and check it draws.

Checks that the DOM after rendering holds the four series, each a polyline with a point per
day, and that the screenshot is not blank and shows each series' colour inside the plot
(above the x axis, where the legend is not).  Standard library only: the PNG is decoded here.
Exit status 0 when every check holds.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib

SERIES = {
    "truth": (0x9E, 0xCA, 0xE1),
    "published": (0xD6, 0x27, 0x28),
    "append": (0xFF, 0x7F, 0x0E),
    "backfill": (0x2C, 0xA0, 0x2C),
}
AXIS = (0x44, 0x44, 0x44)


def chromium(args, workdir):
    cmd = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--user-data-dir=" + os.path.join(workdir, "profile")] + args
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120, check=True).stdout


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


def near(p, q, tol=24):
    return all(abs(a - b) <= tol for a, b in zip(p, q))


def main():
    html = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "demo/revenue.html")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        dom = chromium(["--dump-dom", "file://" + html], work).decode("utf-8", "replace")
        for name in SERIES:
            m = re.search(r'<polyline id="series-%s"[^>]* points="([^"]*)"' % name, dom)
            npoints = len(m.group(1).split()) if m else 0
            if npoints < 30:
                failures.append("series %s: %d points in the rendered DOM" % (name, npoints))
        shot = os.path.join(work, "chart.png")
        chromium(["--window-size=1200,800", "--screenshot=" + shot, "file://" + html], work)
        width, height, rows = read_png(shot)

    colours = {}
    for row in rows:
        for p in row:
            colours[p] = colours.get(p, 0) + 1
    background = max(colours.values())
    if background > 0.97 * width * height or len(colours) < 8:
        failures.append("the screenshot is blank: %d colours, %d of %d pixels the same" %
                        (len(colours), background, width * height))

    # the x axis: the row with the longest run of the axis colour; the plot is above it
    axis_y = max(range(height), key=lambda y: sum(1 for p in rows[y] if near(p, AXIS, 8)))
    counts = {name: 0 for name in SERIES}
    for y in range(axis_y):
        for p in rows[y]:
            for name, colour in SERIES.items():
                if near(p, colour):
                    counts[name] += 1
    for name, n in counts.items():
        if n < 100:
            failures.append("series %s: %d pixels of its colour in the plot" % (name, n))

    print("chart %s: %dx%d, %d colours, x axis at y=%d, series pixels %s" %
          (html, width, height, len(colours), axis_y, counts))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
