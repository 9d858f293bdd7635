#!/usr/bin/env python3
"""Runs every denoiser on the set from make_set.py and scores it (bench/bench-denoise.sh).

  run.py --set SETDIR --out OUTDIR --gpufir PATH --speex PATH [--jobs N]

Systems (each run on every noisy file and on the clean files):
  gpufir default          the built-in chain, no -c (offline: linear phase, delay removed)
  gpufir denoise linear   design = "denoise" learned from the file's noise sample, offline
                          (use_input = true: the long-term Wiener gain), delay removed
  gpufir denoise, noise alone
                          the gain live uses (use_input = false), still linear phase offline:
                          between the two rows around it, it separates gain from phase
  gpufir denoise live     the same design as live runs it: noise alone (use_input = false),
                          phase = "minimum", --causal
  gpufir suppress ...     design = "suppress" (time-varying), alone and with the noise sample;
                          only where the build has it
  gpufir default live     the built-in chain as the daemon runs it at 16 kHz (the suppressor with
                          its zero-phase rumble high-pass; no hum to measure live, no hiss
                          low-pass at 16 kHz, so no FIR), --causal
  SoX noisered            sox noise.wav -n noiseprof P; sox in.wav out.wav noisered P 0.21
  speexdsp                speex_denoise (20 ms frames, denoise on, default suppression)
  RNNoise                 pyrnnoise's librnnoise at 48 kHz (resample_poly 16k -> 48k -> 16k)
  gpufir deepfilter       design = "deepfilter" (DeepFilterNet3 through the DeepFilterNet runtime),
                          alone, with an 18 dB attenuation limit, and after the suppressor, at
                          48 kHz (16k -> 48k -> 16k as RNNoise);
                          where scripts/install-deepfilter.sh has installed the runtime
  DeepFilterNet3          the same runtime (libdeepfilter.so) called directly through ctypes, hop
                          by hop, at 48 kHz: the reference the stage must equal
  noisereduce             noisereduce.reduce_noise (PyPI): its non-stationary default, and
                          stationary=True with the file's noise sample (spectral gating)

Every output is aligned with its input before scoring: the lag that maximises the
cross-correlation of output and input (within +-250 ms) is removed, so every system is
scored without its delay, and the median lag is reported. Scores against the clean speech:
PESQ (ITU-T P.862.2 wideband, `pesq`), STOI and extended STOI (`pystoi`), SI-SDR (numpy),
each also as a delta against the noisy input's score. The clean set's 48 kHz files run at
48 kHz and are scored at 16 kHz (both signals resampled: PESQ wideband is defined there).

Writes OUTDIR/results.csv (one row per file and system), OUTDIR/summary.md (the tables it
prints) and OUTDIR/systems.csv (latency, speed).
"""
import argparse
import csv
import json
import multiprocessing
import os
import re
import resource
import shutil
import subprocess
import time

import numpy as np
import scipy.signal as signal
import soundfile as sf

RATE = 16000
MAX_LAG_S = 0.25
SOX_AMOUNT = "0.21"
SUPPRESS_DB = 15.0
# The built-in chain as the daemon runs it at 16 kHz (config/gpufir.conf): no input file to
# measure hum in (so no notch), no hiss low-pass (its 14 kHz cutoff is above 8 kHz), so no FIR
# is left; the suppressor with its zero-phase rumble high-pass (highpass_hz).
LIVE_HIGHPASS_HZ = 25.0
LIVE_CHAIN = """filters = (
  %s
);
chain = ["nr"];
phase = "minimum";
"""


# ---------------------------------------------------------------------------------- systems

class System:
    key = ""
    label = ""
    latency = ""  # from the design

    def available(self):
        return True, ""

    def run(self, item, inp, out, work):
        raise NotImplementedError


class Gpufir(System):
    def __init__(self, exe, key, label, conf=None, causal=False):
        self.exe, self.key, self.label, self.conf, self.causal = exe, key, label, conf, causal

    def config(self, noise_path):
        return None if self.conf is None else self.conf.replace("@NOISE@", noise_path)

    def write_conf(self, item, work):
        text = self.config(os.path.abspath(item["noise_sample_path"]))
        if text is None:
            return None
        path = os.path.join(work, "conf", f"{self.key}__{item['id']}.conf")
        with open(path, "w") as f:
            f.write(text)
        return path

    def run(self, item, inp, out, work):
        cmd = [self.exe, "-q", "-i", inp, "-o", out]
        conf = self.write_conf(item, work)
        if conf:
            cmd += ["-c", conf]
        if self.causal:
            cmd.append("--causal")
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)

    def check(self, noise_path, work):
        """gpufir --check-config at 16 kHz: (ok, text)."""
        cmd = [self.exe, "--check-config", "--rate", str(RATE)]
        text = self.config(os.path.abspath(noise_path))
        if text is not None:
            path = os.path.join(work, "conf", f"{self.key}__check.conf")
            with open(path, "w") as f:
                f.write(text)
            cmd.insert(2, path)
        p = subprocess.run(cmd, capture_output=True, text=True)
        return p.returncode == 0, p.stdout + p.stderr

    def describe_delay(self, check_text):
        m = re.search(r"delay:\s+all channels: group delay ([-0-9.]+) ms", check_text)
        gd = float(m.group(1)) if m else None
        lat = [ln.strip() for ln in check_text.splitlines() if "latency" in ln.lower()]
        if lat:  # a time-varying stage's own figure, and the FIR's where there is one
            fir = f"; FIR group delay {gd:.2f} ms" if gd is not None and gd > 0.005 else ""
            text = "; ".join(lat) + fir
            return re.sub(r"noise estimate from /[^)]*", "noise estimate from the sample", text)
        if gd is None:
            return "? (no delay line in --check-config)"
        if self.key in ("gpufir-default",):
            return (f"offline 0 (linear, delay removed); live: minimum phase, {gd:.2f} ms group "
                    f"delay (300 Hz-3 kHz)")
        if self.key in ("gpufir-denoise-linear", "gpufir-denoise-noisealone"):
            return f"offline only: {gd:.1f} ms linear-phase delay, removed (non-causal)"
        if self.key == "gpufir-denoise-live":
            return f"{gd:.2f} ms group delay (minimum phase, 300 Hz-3 kHz)"
        return f"{gd:.2f} ms group delay (--check-config)"


class SoxNoisered(System):
    key, label = "sox-noisered", f"SoX noisered {SOX_AMOUNT}"
    latency = "offline only (whole file, 2048-sample windows)"

    def available(self):
        return (shutil.which("sox") is not None), "sox not found"

    def run(self, item, inp, out, work):
        prof = os.path.join(work, "prof", item["id"] + ".prof")
        if not os.path.exists(prof):
            subprocess.run(["sox", "-V1", item["noise_sample_path"], "-n", "noiseprof", prof],
                           check=True)
        subprocess.run(["sox", "-V1", inp, out, "noisered", prof, SOX_AMOUNT], check=True)


class Speex(System):
    key, label = "speexdsp", "speexdsp preprocess"
    latency = "20 ms frame (320 samples)"

    def __init__(self, exe):
        self.exe = exe

    def available(self):
        return (self.exe is not None and os.access(self.exe, os.X_OK)), f"{self.exe}: not built"

    def run(self, item, inp, out, work):
        subprocess.run([self.exe, inp, out], check=True)


class RNNoise(System):
    key, label = "rnnoise", "RNNoise (pyrnnoise)"
    latency = "10 ms frame (480 samples at 48 kHz)"

    def available(self):
        try:
            from pyrnnoise import rnnoise  # noqa: F401
        except Exception as e:  # ImportError, OSError from ctypes
            return False, f"pyrnnoise: {e}"
        return True, ""

    def run(self, item, inp, out, work):
        from pyrnnoise import rnnoise
        x, rate = sf.read(inp, dtype="float64")
        up = signal.resample_poly(x, 48000 // rate, 1) * 32768.0  # 16-bit-scaled floats
        fs = rnnoise.FRAME_SIZE
        n = -(-len(up) // fs) * fs
        buf = np.zeros(n, dtype=np.float32)
        buf[:len(up)] = up
        y = np.empty_like(buf)
        st = rnnoise.create()
        try:
            frame = np.empty(fs, dtype=np.float32)
            ptr = frame.ctypes.data_as(rnnoise.ctypes.POINTER(rnnoise.ctypes.c_float))
            for i in range(0, n, fs):
                frame[:] = buf[i:i + fs]
                rnnoise.lib.rnnoise_process_frame(st, ptr, ptr)
                y[i:i + fs] = frame
        finally:
            rnnoise.destroy(st)
        down = signal.resample_poly(y[:len(up)].astype(np.float64) / 32768.0, 1,
                                    48000 // rate)[:len(x)]
        sf.write(out, down.astype(np.float32), rate, subtype="FLOAT")


class DeepFilterRef(System):
    """DeepFilterNet3 through its own runtime's C API, as the issue measured it."""
    key, label = "deepfilternet3", "DeepFilterNet3 (libdeepfilter, direct)"
    latency = "30 ms (960-point STFT, 2 hops of lookahead); 10 ms hops at 48 kHz"

    def __init__(self, dfdir):
        self.dir = dfdir

    def available(self):
        lib = os.path.join(self.dir, "libdeepfilter.so")
        return os.path.exists(lib), f"{lib}: not installed (scripts/install-deepfilter.sh)"

    def run(self, item, inp, out, work):
        import ctypes
        lib = ctypes.CDLL(os.path.join(self.dir, "libdeepfilter.so"))
        lib.df_create.restype = ctypes.c_void_p
        lib.df_create.argtypes = [ctypes.c_char_p, ctypes.c_float, ctypes.c_char_p]
        lib.df_process_frame.restype = ctypes.c_float
        lib.df_process_frame.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        lib.df_free.argtypes = [ctypes.c_void_p]
        model = os.path.join(self.dir, "DeepFilterNet3_onnx.tar.gz").encode()
        x, rate = sf.read(inp, dtype="float64")
        up = to_48k(x, rate)
        hop = 480
        buf = np.zeros(-(-len(up) // hop) * hop + 3 * hop, dtype=np.float32)  # flushes its lag
        buf[:len(up)] = up
        y = np.empty_like(buf)
        st = lib.df_create(model, 100.0, None)
        try:
            for i in range(0, len(buf), hop):
                a = np.ascontiguousarray(buf[i:i + hop])
                lib.df_process_frame(st, a.ctypes.data, y[i:].ctypes.data)
        finally:
            lib.df_free(st)
        down = from_48k(y.astype(np.float64), rate)[:len(x) + 480 * rate // 48000]
        sf.write(out, down.astype(np.float32), rate, subtype="FLOAT")


def to_48k(x, rate):
    """A 16 or 48 kHz file at 48 kHz, the neural stage's rate (the clean set holds both)."""
    return signal.resample_poly(x, 48000 // rate, 1) if rate != 48000 else x


def from_48k(y, rate):
    return signal.resample_poly(y, 1, 48000 // rate) if rate != 48000 else y


class Gpufir48(Gpufir):
    """A gpufir configuration run at 48 kHz (the neural stage's rate): the 16 kHz file resampled
    up and back down, as RNNoise's and DeepFilterNet3's rows are."""

    def run(self, item, inp, out, work):
        x, rate = sf.read(inp, dtype="float64")
        up_in = os.path.join(work, "out", f"{self.key}__{item['id']}.in48.wav")
        up_out = os.path.join(work, "out", f"{self.key}__{item['id']}.out48.wav")
        sf.write(up_in, to_48k(x, rate).astype(np.float32), 48000, subtype="FLOAT")
        super().run(item, up_in, up_out, work)
        y, _ = sf.read(up_out, dtype="float64")
        sf.write(out, from_48k(y, rate)[:len(x)].astype(np.float32), rate, subtype="FLOAT")
        os.remove(up_in)
        os.remove(up_out)

    def check(self, noise_path, work):
        global RATE
        saved, RATE = RATE, 48000
        try:
            return super().check(noise_path, work)
        finally:
            RATE = saved


def deepfilter_systems(exe):
    dfn = "{ name = \"dfn\"; design = \"deepfilter\"; }"
    # The attenuation limit that keeps every noise's STOI (docs/denoise.md, "The neural stage")
    dfn_18 = "{ name = \"dfn\"; design = \"deepfilter\"; atten_lim_db = 18.0; }"
    sup = "{ name = \"nr\"; design = \"suppress\"; reduction_db = %.1f; }" % SUPPRESS_DB
    return [
        Gpufir48(exe, "gpufir-deepfilter", "gpufir deepfilter (48 kHz)",
                 "filters = ( %s );\nchain = [\"dfn\"];\n" % dfn),
        Gpufir48(exe, "gpufir-deepfilter-causal", "gpufir deepfilter, causal (live)",
                 "filters = ( %s );\nchain = [\"dfn\"];\n" % dfn, causal=True),
        Gpufir48(exe, "gpufir-deepfilter-18db", "gpufir deepfilter, 18 dB limit (48 kHz)",
                 "filters = ( %s );\nchain = [\"dfn\"];\n" % dfn_18),
        Gpufir48(exe, "gpufir-suppress-deepfilter", "gpufir suppress + deepfilter (48 kHz)",
                 "filters = ( %s,\n  %s );\nchain = [\"nr\", \"dfn\"];\n" % (sup, dfn)),
    ]
class NoiseReduce(System):
    """noisereduce (PyPI): spectral gating, without a profile (its default, non-stationary: the
    noise threshold follows a smoothed spectrogram) or with the file's noise sample (stationary)."""
    latency = "offline only (whole file, 2048-point STFT)"

    def __init__(self, with_sample):
        self.with_sample = with_sample
        self.key = "noisereduce-sample" if with_sample else "noisereduce"
        self.label = ("noisereduce, stationary + noise sample" if with_sample
                      else "noisereduce (non-stationary)")

    def available(self):
        try:
            import noisereduce  # noqa: F401
        except Exception as e:
            return False, f"noisereduce: {e}"
        return True, ""

    def run(self, item, inp, out, work):
        import noisereduce
        x, rate = sf.read(inp, dtype="float64")
        kw = dict(y=x, sr=rate, n_jobs=1)
        if self.with_sample:
            kw.update(stationary=True, y_noise=sf.read(item["noise_sample_path"], dtype="float64")[0])
        y = noisereduce.reduce_noise(**kw)
        sf.write(out, np.asarray(y, dtype=np.float32), rate, subtype="FLOAT")


def gpufir_systems(exe):
    denoise = ("filters = ( { name = \"dn\"; design = \"denoise\"; noise = \"@NOISE@\"; %s } );\n"
               "chain = [\"dn\"];\n")
    sup = "{ name = \"nr\"; design = \"suppress\"; reduction_db = %.1f;%s }" % (SUPPRESS_DB, "%s")
    return [
        Gpufir(exe, "gpufir-default", "gpufir default chain"),
        Gpufir(exe, "gpufir-denoise-linear", "gpufir denoise, linear (offline)",
               denoise % ""),
        Gpufir(exe, "gpufir-denoise-noisealone", "gpufir denoise, noise alone, linear (offline)",
               denoise % "use_input = false;"),
        Gpufir(exe, "gpufir-denoise-live", "gpufir denoise, minimum + causal (live)",
               denoise % "use_input = false; phase = \"minimum\";", causal=True),
        Gpufir(exe, "gpufir-suppress", "gpufir suppress",
               "filters = ( %s );\nchain = [\"nr\"];\n" % (sup % "")),
        Gpufir(exe, "gpufir-suppress-noise", "gpufir suppress + noise sample",
               "filters = ( %s );\nchain = [\"nr\"];\n" % (sup % " noise = \"@NOISE@\";")),
        Gpufir(exe, "gpufir-default-live", "gpufir default chain, minimum + causal (live)",
               LIVE_CHAIN % (sup % (" highpass_hz = %.1f;" % LIVE_HIGHPASS_HZ)), causal=True),
    ]


def cpu_seconds():
    """CPU time of this process and its finished children (user + system)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime


# ---------------------------------------------------------------------------------- scoring

def align(out, inp, rate=RATE):
    """out shifted by the lag (within MAX_LAG_S) that maximises its cross-correlation with inp."""
    m = int(MAX_LAG_S * rate)
    n = len(inp) + len(out)
    nfft = 1 << (n - 1).bit_length()
    xc = np.fft.irfft(np.fft.rfft(out, nfft) * np.conj(np.fft.rfft(inp, nfft)), nfft)
    lags = np.concatenate([np.arange(0, m + 1), np.arange(-m, 0)])
    vals = np.concatenate([xc[:m + 1], xc[nfft - m:]])
    lag = int(lags[np.argmax(vals)])
    y = np.zeros(len(inp))
    if lag >= 0:
        seg = out[lag:lag + len(inp)]
        y[:len(seg)] = seg
    else:
        seg = out[:len(inp) + lag]
        y[-lag:-lag + len(seg)] = seg
    return y, lag


def si_sdr(ref, est):
    ref = ref - ref.mean()
    est = est - est.mean()
    alpha = np.dot(est, ref) / np.dot(ref, ref)
    target = alpha * ref
    resid = est - target
    return 10 * np.log10(np.dot(target, target) / max(np.dot(resid, resid), 1e-20))


def score(clean, deg):
    from pesq import pesq
    from pystoi import stoi
    try:
        p = pesq(RATE, clean, deg, "wb")
    except Exception:  # NoUtterancesError and the like: silent output
        p = float("nan")
    return dict(pesq=p, stoi=stoi(clean, deg, RATE, extended=False),
                estoi=stoi(clean, deg, RATE, extended=True), sisdr=si_sdr(clean, deg))


def score_job(job):
    clean, rate = sf.read(job["clean"], dtype="float64")
    inp, _ = sf.read(job["input"], dtype="float64")
    if job["output"] is None:
        deg, lag = inp, 0
    else:
        out, _ = sf.read(job["output"], dtype="float64")
        deg, lag = align(out, inp, rate)
    if rate != RATE:  # PESQ wideband is defined at 16 kHz: both sides resampled alike
        clean = signal.resample_poly(clean, 1, rate // RATE)
        deg = signal.resample_poly(deg, 1, rate // RATE)
    r = score(clean, deg)
    r["lag_ms"] = lag * 1000.0 / rate
    return job["item"], job["system"], r


# ---------------------------------------------------------------------------------- tables

METRICS = [("pesq", "PESQ", "{:+.2f}"), ("stoi", "STOI", "{:+.3f}"), ("estoi", "ESTOI", "{:+.3f}"),
           ("sisdr", "SI-SDR", "{:+.1f}")]


def md_table(header, rows, left=1):
    """A markdown table; the first `left` columns left-aligned, the others right-aligned."""
    lines = ["| " + " | ".join(header) + " |",
             "| " + " | ".join(["---"] * left + ["---:"] * (len(header) - left)) + " |"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def mean(vals):
    vals = [v for v in vals if v is not None and not np.isnan(v)]
    return float(np.mean(vals)) if vals else float("nan")


def fmt(f, v):
    return "n/a" if v is None or np.isnan(v) else f.format(v)


def delta_table(res, items, systems):
    """Mean deltas per system over items; the noisy input row gives its absolute scores."""
    rows = [["noisy input (absolute)"]
            + [fmt(f.replace("+", ""), mean([res[(it["id"], "noisy")][k] for it in items]))
               for k, _, f in METRICS]]
    for s in systems:
        rows.append([s.label] + [fmt(f, mean([res[(it["id"], s.key)][k] - res[(it["id"], "noisy")][k]
                                              for it in items])) for k, _, f in METRICS])
    return md_table(["system"] + [f"Δ{name}" for _, name, _ in METRICS], rows)


def transparency(res, clean_items, systems):
    """Clean speech in: per rate, each system's mean scores and its worst clip's PESQ; then every
    clip's PESQ."""
    parts = ["## Transparency: clean speech in, scored against itself\n\n"
             "(identity: PESQ 4.64, STOI 1, ESTOI 1, SI-SDR unbounded; profile-based systems "
             "get a \"quiet room\" profile, white noise 40 dB below the speech; 48 kHz files run "
             "at 48 kHz, scored at 16 kHz)"]
    for tag in dict.fromkeys(it["noise"] for it in clean_items):
        sel = [it for it in clean_items if it["noise"] == tag]
        rows = []
        for s in systems:
            pesqs = [(res[(it["id"], s.key)]["pesq"], it["utt"]) for it in sel]
            worst = min(pesqs)
            rows.append([s.label] + [fmt(f.replace("+", ""), mean([res[(it["id"], s.key)][k]
                                                                   for it in sel]))
                                     for k, _, f in METRICS] + [f"{worst[0]:.2f} ({worst[1]})"])
        parts.append(f"### {len(sel)} clips at {sel[0]['rate'] // 1000} kHz\n\n"
                     + md_table(["system"] + [name for _, name, _ in METRICS] + ["worst PESQ"],
                                rows))
    rows = [[f"{it['utt']} {it['rate'] // 1000} kHz"]
            + [f"{res[(it['id'], s.key)]['pesq']:.2f}" for s in systems] for it in clean_items]
    parts.append("### PESQ per clip\n\n" + md_table(["clip"] + [s.label for s in systems], rows))
    return "\n\n".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpufir", required=True)
    ap.add_argument("--speex")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--commit", default="")
    ap.add_argument("--deepfilter", default="", help="the folder install-deepfilter.sh filled")
    ap.add_argument("--systems", default="", help="only the systems whose label matches (regex)")
    ap.add_argument("--items", default="", help="only the files whose id matches (regex)")
    args = ap.parse_args()

    with open(os.path.join(args.set, "manifest.json")) as f:
        manifest = json.load(f)
    items = [it for it in manifest["items"] if re.search(args.items, it["id"])]
    for it in items:
        it.setdefault("rate", manifest["rate"])
        for k in ("clean", "input", "noise_sample"):
            it[k + "_path"] = os.path.join(args.set, it[k])
    work = os.path.join(args.out, "work")
    shutil.rmtree(work, ignore_errors=True)  # no stale outputs or profiles from an earlier set
    for sub in ("conf", "prof", "out"):
        os.makedirs(os.path.join(work, sub), exist_ok=True)

    # Which systems this machine and build have.
    systems, notes, latency = [], [], {}
    probe_noise = items[0]["noise_sample_path"]
    dfn_ok = args.deepfilter and os.path.exists(os.path.join(args.deepfilter, "libdeepfilter.so"))
    if not dfn_ok:
        notes.append("the deepfilter rows: skipped (no DeepFilterNet runtime: "
                     "scripts/install-deepfilter.sh)")
    else:
        os.environ["GPUFIR_DEEPFILTER_DIR"] = os.path.abspath(args.deepfilter)
    def wanted(s):
        return re.search(args.systems, s.label, re.I)

    for g in gpufir_systems(args.gpufir) + (deepfilter_systems(args.gpufir) if dfn_ok else []):
        if not wanted(g):
            continue
        ok, text = g.check(probe_noise, work)
        if not ok:
            if "suppress" in g.key and re.search(r'unknown design "suppress"', text):
                notes.append(f"{g.label}: not available in this build (gpufir --check-config: "
                             f"unknown design \"suppress\"); its rows are skipped")
            else:
                last = text.strip().splitlines()[-1] if text.strip() else "?"
                notes.append(f"{g.label}: skipped, --check-config failed: {last}")
            continue
        latency[g.key] = g.describe_delay(text)
        systems.append(g)
    for s in (SoxNoisered(), Speex(args.speex), RNNoise(), NoiseReduce(False), NoiseReduce(True)) + (
            (DeepFilterRef(args.deepfilter),) if dfn_ok else ()):
        if not wanted(s):
            continue
        ok, why = s.available()
        if not ok:
            notes.append(f"{s.label}: skipped ({why})")
            continue
        latency[s.key] = s.latency
        systems.append(s)
    for n in notes:
        print("note: " + n, flush=True)

    # Run: one system at a time, one file at a time, timed (speed is wall time per file,
    # process start-up included).
    wall, cpu, audio = {}, {}, {}
    jobs = []
    load0 = os.getloadavg()[0]
    for s in systems:
        t_sys = time.perf_counter()
        wall[s.key], cpu[s.key], audio[s.key] = 0.0, 0.0, 0.0
        for it in items:
            out = os.path.join(work, "out", f"{s.key}__{it['id']}.wav")
            t0, c0 = time.perf_counter(), cpu_seconds()
            s.run(it, it["input_path"], out, work)
            wall[s.key] += time.perf_counter() - t0
            cpu[s.key] += cpu_seconds() - c0
            audio[s.key] += it["seconds"]
            jobs.append(dict(item=it["id"], system=s.key, clean=it["clean_path"],
                             input=it["input_path"], output=out))
        print(f"ran {s.label}: {len(items)} files in {time.perf_counter() - t_sys:.1f} s",
              flush=True)
    load1 = os.getloadavg()[0]
    for it in items:
        if it["snr"] is not None:
            jobs.append(dict(item=it["id"], system="noisy", clean=it["clean_path"],
                             input=it["input_path"], output=None))

    t0 = time.perf_counter()
    res = {}
    with multiprocessing.Pool(max(1, args.jobs)) as pool:
        for item, system, r in pool.imap_unordered(score_job, jobs, chunksize=4):
            res[(item, system)] = r
    print(f"scored {len(jobs)} outputs in {time.perf_counter() - t0:.1f} s", flush=True)

    # results.csv
    byid = {it["id"]: it for it in items}
    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item", "utterance", "noise", "snr_db", "system", "pesq", "stoi", "estoi",
                    "sisdr_db", "d_pesq", "d_stoi", "d_estoi", "d_sisdr_db", "lag_ms"])
        for (iid, sk), r in sorted(res.items()):
            it = byid[iid]
            base = res.get((iid, "noisy"))
            d = [r[k] - base[k] if base else "" for k, _, _ in METRICS]
            w.writerow([iid, it["utt"], it["noise"], "" if it["snr"] is None else it["snr"], sk]
                       + [f"{r[k]:.4f}" for k, _, _ in METRICS]
                       + [f"{v:.4f}" if v != "" else "" for v in d] + [f"{r['lag_ms']:.3f}"])

    noisy_items = [it for it in items if it["snr"] is not None]
    clean_items = [it for it in items if it["snr"] is None]
    noises = list(dict.fromkeys(it["noise"] for it in noisy_items))
    snrs = sorted(set(it["snr"] for it in noisy_items))
    out = []
    out.append(f"# Denoising benchmark\n\nset: {len(noisy_items)} noisy files "
               f"({len(set(it['utt'] for it in items))} utterances x {len(noises)} noises x "
               f"{len(snrs)} SNRs), {len(clean_items)} clean files, "
               f"{sum(it['seconds'] for it in items):.1f} s of audio, mono, noisy files at 16 kHz"
               + (f"; gpufir commit {args.commit}" if args.commit else ""))
    if notes:
        out.append("\n".join("- " + n for n in notes))
    if noisy_items:
        out.append("## Mean over all noisy files\n\n" + delta_table(res, noisy_items, systems))
    stat = [it for it in noisy_items if it["stationary"]]
    if stat:
        out.append("## Mean over the stationary noises (white, pink, brown, hum, fan)\n\n"
                   + delta_table(res, stat, systems))
    nonstat = [it for it in noisy_items if it["stationary"] is False]
    if nonstat:
        out.append("## Mean over the non-stationary noises (babble, levelstep)\n\n"
                   + delta_table(res, nonstat, systems))
    for nz in dict.fromkeys(it["noise"] for it in noisy_items):
        sel = [it for it in noisy_items if it["noise"] == nz]
        out.append(f"## {nz}: mean over its {len(sel)} files (every SNR)\n\n"
                   + delta_table(res, sel, systems))
    for src, label in (("espeak", "espeak-ng (synthetic) speech"),
                       ("alsa", "the recorded alsa-utils voice")):
        sel = [it for it in noisy_items if it["utt"].startswith(src)]
        if sel and len(sel) < len(noisy_items):
            out.append(f"## Mean over the noisy files with {label}\n\n" + delta_table(res, sel, systems))
    # Matrices: noise x SNR rows, systems as columns, one per metric.
    for k, name, f in METRICS:
        rows = []
        for nz in noises:
            for snr in snrs:
                sel = [it for it in noisy_items if it["noise"] == nz and it["snr"] == snr]
                if not sel:
                    continue
                rows.append([f"{nz} {snr} dB",
                             fmt(f.replace("+", ""), mean([res[(it["id"], "noisy")][k] for it in sel]))]
                            + [fmt(f, mean([res[(it["id"], s.key)][k] - res[(it["id"], "noisy")][k]
                                            for it in sel])) for s in systems])
        out.append(f"## Δ{name} per noise and SNR (input: the noisy file's {name})\n\n"
                   + md_table(["noise", "input"] + [s.label for s in systems], rows))
    out.append(transparency(res, clean_items, systems))
    # Latency and speed.
    rows = []
    syscsv = []
    for s in systems:
        lags = [res[(it["id"], s.key)]["lag_ms"] for it in items]
        xrt = audio[s.key] / wall[s.key] if wall[s.key] > 0 else float("nan")
        xcpu = audio[s.key] / cpu[s.key] if cpu[s.key] > 0 else float("nan")
        rows.append([s.label, latency[s.key], f"{np.median(lags):.2f} ms "
                     f"({np.min(lags):.2f}..{np.max(lags):.2f})", f"{xrt:.0f}x", f"{xcpu:.0f}x"])
        syscsv.append([s.key, s.label, latency[s.key], f"{np.median(lags):.3f}",
                       f"{np.min(lags):.3f}", f"{np.max(lags):.3f}", f"{audio[s.key]:.1f}",
                       f"{wall[s.key]:.3f}", f"{xrt:.1f}", f"{cpu[s.key]:.3f}", f"{xcpu:.1f}"])
    out.append("## Latency and speed\n\n(latency from the design; lag: the cross-correlation "
               "alignment removed before scoring, median (min..max) over all files; speed: audio "
               "seconds / wall seconds, and / CPU seconds (user + system, its threads and child "
               "processes), over the whole set, one file per call, process start-up included, one "
               f"call at a time; load average {load0:.1f} before, {load1:.1f} after)\n\n"
               + md_table(["system", "latency (design)", "measured lag", "speed (wall)",
                           "speed (CPU)"], rows, left=2))
    with open(os.path.join(args.out, "systems.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["system", "label", "latency", "lag_median_ms", "lag_min_ms", "lag_max_ms",
                    "audio_s", "wall_s", "x_realtime", "cpu_s", "x_realtime_cpu"])
        w.writerows(syscsv)
    cond = ["# Per noise and SNR: mean deltas over the utterances"]
    for nz in noises:
        for snr in snrs:
            sel = [it for it in noisy_items if it["noise"] == nz and it["snr"] == snr]
            if sel:
                cond.append(f"## {nz}, {snr} dB SNR ({len(sel)} files)\n\n"
                            + delta_table(res, sel, systems))
    ctext = "\n\n".join(cond) + "\n"
    with open(os.path.join(args.out, "conditions.md"), "w") as f:
        f.write(ctext)
    text = "\n\n".join(out) + "\n"
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(text)
    print()
    print(ctext)
    print(text)


if __name__ == "__main__":
    main()
