#!/usr/bin/env python3
"""gpufir --plot: the SVG is well formed (xmllint), its plotted points match
the response numpy computes from the exported taps at every plotted
frequency, -i IN sets the rate, and headless Chromium renders it (a
screenshot that is not blank). Exit 77 (skipped) only for what this machine
lacks, saying what."""
import os
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

import numpy as np

BIN = os.environ["GPUFIR_BIN"]
SVG = "{http://www.w3.org/2000/svg}"


def run(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"gpufir {' '.join(args)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return p


def panels(path):
    root = ET.parse(path).getroot()
    out = {}
    for g in root.iter(SVG + "g"):
        if g.get("class") != "panel":
            continue
        a = {k[5:]: float(v) for k, v in g.attrib.items() if k.startswith("data-")}
        curves = {}
        for pl in g.iter(SVG + "polyline"):
            pts = np.array([[float(v) for v in p.split(",")] for p in pl.get("points").split()])
            xs = np.array([float(v) for v in pl.get("data-x").split()])
            assert len(xs) == len(pts)
            curves.setdefault(int(pl.get("data-channel")), []).append((xs, pts))
        out[g.get("id")] = (a, curves)
    return root, out


def to_data(a, segs):
    """The points' exact x (data-x), checked against their pixel x by the panel's
    declared mapping; their pixel y turned back into a value."""
    xs = np.concatenate([s[0] for s in segs])
    pts = np.vstack([s[1] for s in segs])
    if a["xlog"]:
        u = (np.log10(xs) - np.log10(a["xmin"])) / (np.log10(a["xmax"]) - np.log10(a["xmin"]))
    else:
        u = (xs - a["xmin"]) / (a["xmax"] - a["xmin"])
    px = a["x0"] + u * (a["x1"] - a["x0"])
    assert np.max(np.abs(px - pts[:, 0])) <= 0.0051, "a point is not drawn where its x belongs"
    y = a["ymax"] - (pts[:, 1] - a["y0"]) / (a["y1"] - a["y0"]) * (a["ymax"] - a["ymin"])
    return xs, y


def response(h, f, rate):
    k = np.arange(len(h))
    z = np.exp(-2j * np.pi * np.outer(f, k) / rate)
    H = z @ h
    K = z @ (k * h)
    return 20 * np.log10(np.abs(H)), np.real(K / H) * 1000.0 / rate


def check_points(svg, taps, rate):
    root, ps = panels(svg)
    vb = [float(v) for v in root.get("viewBox").split()]
    assert vb[0] == 0 and vb[2] > 0, "a viewBox makes it scale"
    for pid in ("magnitude", "group-delay", "impulse"):
        assert pid in ps, f"panel {pid} missing"
    for c, h in enumerate(taps):
        a, curves = ps["magnitude"]
        assert abs(a["xmax"] - rate / 2) < 1e-6, a
        f, db = to_data(a, curves[c])
        want_db, want_gd = response(h, f, rate)
        # half a pixel of the 2-decimal coordinates, in data units, is the plot's resolution
        tol = 0.006 * (a["ymax"] - a["ymin"]) / (a["y1"] - a["y0"])
        inside = want_db > a["ymin"] + tol
        err = np.max(np.abs(db[inside] - want_db[inside]))
        assert inside.sum() > 100 and err < tol, (c, err, tol)
        clipped = ~inside
        assert np.all(db[clipped] <= a["ymin"] + 2 * tol)
        print(f"  channel {c}: {len(f)} magnitude points, {inside.sum()} inside the axis, "
              f"max error {err:.2e} dB (resolution {tol:.2e})")
        a, curves = ps["group-delay"]
        f, gd = to_data(a, curves[c])
        want_db, want_gd = response(h, f, rate)
        tol = 0.006 * (a["ymax"] - a["ymin"]) / (a["y1"] - a["y0"])
        inside = (want_gd > a["ymin"]) & (want_gd < a["ymax"])
        err = np.max(np.abs(gd[inside] - want_gd[inside]))
        assert inside.sum() > 50 and err < tol, (c, err, tol)
        print(f"  channel {c}: {len(f)} group-delay points, max error {err:.2e} ms")
        a, curves = ps["impulse"]
        t, y = to_data(a, curves[c])
        k = np.rint(t * rate / 1000.0).astype(int)
        tol = 0.006 * (a["ymax"] - a["ymin"]) / (a["y1"] - a["y0"])
        assert np.max(np.abs(y - h[k])) < tol, "impulse points are the taps"
    legend = [t.text for t in root.iter(SVG + "text") if t.text and t.text.startswith("channel ")]
    assert legend == [f"channel {c}" for c in range(len(taps))], legend
    for label in ("frequency (Hz)", "gain (dB)", "delay (ms)", "time (ms)"):
        assert any(t.text == label for t in root.iter(SVG + "text")), label


def png_pixels(path):
    """Decode an 8-bit RGB/RGBA PNG (what Chromium writes) into a numpy array."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    img = np.zeros((h, stride), dtype=np.int32)
    prev = np.zeros(stride, dtype=np.int32)
    for r in range(h):
        ft = raw[r * (stride + 1)]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=r * (stride + 1) + 1).astype(np.int32)
        out = np.zeros(stride, dtype=np.int32)
        for i in range(stride):  # PNG filters (0 none, 1 sub, 2 up, 3 average, 4 Paeth)
            a = out[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 0:
                v = line[i]
            elif ft == 1:
                v = line[i] + a
            elif ft == 2:
                v = line[i] + b
            elif ft == 3:
                v = line[i] + (a + b) // 2
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                v = line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)
            out[i] = v & 255
        img[r] = out
        prev = out
    return img.reshape(h, w, bpp)[:, :, :3]


def main():
    tmp = tempfile.mkdtemp(prefix="gpufir-plot-")
    rate = 44100
    rng = np.random.default_rng(1)
    noise = rng.uniform(-1, 1, 96) * np.exp(-np.arange(96) / 20.0)  # not symmetric
    conf = os.path.join(tmp, "plot.conf")
    with open(conf, "w") as fp:
        fp.write('filters = (\n'
                 '  { name = "lp"; design = "lowpass"; cutoff_hz = 3000.0; taps = 201; },\n'
                 '  { name = "room"; coeffs = [' + ", ".join(f"{v:.17g}" for v in noise) + ']; }\n'
                 ');\nchain = ["lp"];\n'
                 'routes = ( { channel = 1; chain = ["room"]; gain_db = -3.0; },\n'
                 '           { channel = 2; chain = ["lp", "room"]; delay_ms = 1.0; invert = true; } );\n')
    svg = os.path.join(tmp, "response.svg")
    p = run("--plot", "-c", conf, "-o", svg, "--rate", str(rate))
    assert "3 channels at 44100 Hz (from --rate)" in p.stdout, p.stdout
    x = subprocess.run(["xmllint", "--noout", svg], capture_output=True, text=True)
    assert x.returncode == 0, x.stderr
    # the taps, exported by gpufir and read as text: numpy computes their response itself
    run("--export-filters", os.path.join(tmp, "ex"), "-c", conf, "--rate", str(rate))
    # (9 digits name a float exactly: round to float32 to get the engine's taps back)
    taps = [np.loadtxt(os.path.join(tmp, "ex", f"channel-{c}.txt")).astype(np.float32).astype(np.float64)
            for c in range(3)]
    check_points(svg, taps, rate)

    # offline: the input's rate
    wav = os.path.join(tmp, "in.wav")
    with open(wav, "wb") as fp:  # a 16-bit mono WAV of 10 frames at 22050 Hz
        pcm = b"\0\0" * 10
        fp.write(b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVEfmt " +
                 struct.pack("<IHHIIHH", 16, 1, 1, 22050, 44100, 2, 16) + b"data" +
                 struct.pack("<I", len(pcm)) + pcm)
    svg2 = os.path.join(tmp, "offline.svg")
    p = run("--plot", "-i", wav, "-o", svg2)
    assert "1 channel at 22050 Hz (from the input file)" in p.stdout, p.stdout
    _, ps = panels(svg2)
    assert ps["magnitude"][0]["xmax"] == 11025.0

    chromium = next((c for c in ("chromium", "chromium-browser", "google-chrome")
                     if subprocess.run(["sh", "-c", f"command -v {c}"], capture_output=True).returncode == 0), None)
    if not chromium:
        print("SKIP: no chromium on PATH (package chromium): the render check did not run")
        sys.exit(77)
    png = os.path.join(tmp, "shot.png")
    r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--screenshot={png}", "--window-size=640,1100", "file://" + svg],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or not os.path.exists(png):
        print(f"SKIP: {chromium} --headless failed (exit {r.returncode}): {r.stderr[-600:]}")
        sys.exit(77)
    img = png_pixels(png)
    ink = np.any(img < 200, axis=2)
    coloured = (np.max(img, axis=2) - np.min(img, axis=2)) > 80
    print(f"  chromium screenshot {img.shape[1]}x{img.shape[0]}: {ink.mean():.1%} dark pixels, "
          f"{coloured.sum()} coloured")
    assert 0.01 < ink.mean() < 0.6, "the screenshot is blank (or all ink)"
    assert coloured.sum() > 500, "no coloured curves in the screenshot"
    subprocess.run(["rm", "-rf", tmp])
    print("test_plot: OK")


if __name__ == "__main__":
    main()
