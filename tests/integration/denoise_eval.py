#!/usr/bin/env python3
"""Denoising measured end to end with the real gpufir (CTest: test_denoise_snr).

Builds its own material: speech from espeak-ng (resampled to 48 kHz by sox),
stationary noises at known levels (white, pink, and a "room": low rumble,
a fan's tonal band and hiss), mains hum off 50 Hz by a few hundredths with
harmonics. Runs gpufir offline (aligned output) and measures, against the
clean speech, SNR = 10 log10(sum s^2 / sum (y - s)^2): every error counts,
noise left and speech distorted alike. Prints the figures and asserts bounds.

Usage: denoise_eval.py GPUFIR [--sox]   (--sox: also SoX noiseprof/noisered)
Exit 77 (skipped) without espeak-ng or sox.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import wave

try:
    import numpy as np
    from scipy.signal import fftconvolve
except ImportError:
    print("SKIP: numpy and scipy are needed")
    sys.exit(77)

RATE = 48000


def write_wav(path, x, rate=RATE):
    x = np.asarray(x, dtype=np.float32)
    # float WAV by hand: the stdlib wave module only writes PCM
    data = x.tobytes()
    hdr = b"RIFF" + (36 + len(data)).to_bytes(4, "little") + b"WAVEfmt "
    hdr += (16).to_bytes(4, "little") + (3).to_bytes(2, "little") + (1).to_bytes(2, "little")
    hdr += rate.to_bytes(4, "little") + (rate * 4).to_bytes(4, "little")
    hdr += (4).to_bytes(2, "little") + (32).to_bytes(2, "little")
    hdr += b"data" + len(data).to_bytes(4, "little")
    with open(path, "wb") as f:
        f.write(hdr + data)


def read_wav(path):
    with open(path, "rb") as f:
        b = f.read()
    i = b.find(b"data")
    n = int.from_bytes(b[i + 4:i + 8], "little")
    fmt = b.find(b"fmt ")
    tag = int.from_bytes(b[fmt + 8:fmt + 10], "little")
    bits = int.from_bytes(b[fmt + 22:fmt + 24], "little")
    raw = b[i + 8:i + 8 + n]
    if tag in (3, 0xFFFE) and bits == 32:
        return np.frombuffer(raw, dtype="<f4").astype(np.float64)
    return np.frombuffer(raw, dtype="<i2").astype(np.float64) / 32768.0


def speech(tmp):
    text = ("The quick brown fox jumps over the lazy dog. People who denoise a room "
            "want the filter learned from a few seconds of its own noise.")
    s22 = os.path.join(tmp, "s22.wav")
    s48 = os.path.join(tmp, "s48.wav")
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "165", "-w", s22, text], check=True)
    subprocess.run(["sox", "-D", "-V1", s22, "-e", "floating-point", "-b", "32", s48, "gain", "-3",
                    "rate", "-v", str(RATE), "gain", "-n", "-6"], check=True)
    return read_wav(s48)


def rms_db(x):
    return 10 * np.log10(np.mean(x ** 2) + 1e-300)


def scale_to(x, db):
    return x * 10 ** ((db - rms_db(x)) / 20)


def pink(n, rng):
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.arange(len(spec))
    spec[1:] /= np.sqrt(f[1:])
    spec[0] = 0
    return np.fft.irfft(spec, n)


def room(n, rng):
    """Low rumble (below 120 Hz), a fan's band around 1.2 kHz, hiss above 5 kHz, a floor."""
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / RATE)
    g = (0.05 + 3.0 / (1 + (f / 80.0) ** 4) + 1.5 * np.exp(-0.5 * ((f - 1200) / 60) ** 2)
         + 1.0 / (1 + (5000 / np.maximum(f, 1)) ** 4))
    return np.fft.irfft(spec * g, n)


def hum(n, f0, rng):
    t = np.arange(n) / RATE
    amps = (0.1, 0.03, 0.04, 0.015)
    return sum(a * np.sin(2 * np.pi * f0 * (k + 1) * t + rng.uniform(0, 6.28)) for k, a in enumerate(amps))


def snr(clean, y):
    return 10 * np.log10(np.sum(clean ** 2) / np.sum((y - clean) ** 2))


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("FAILED: %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return r.stderr


def gpufir_run(gpufir, tmp, name, conf_text, noisy, *extra):
    conf = os.path.join(tmp, name + ".conf")
    with open(conf, "w") as f:
        f.write(conf_text)
    inp, out = os.path.join(tmp, name + "-in.wav"), os.path.join(tmp, name + "-out.wav")
    write_wav(inp, noisy)
    log = run([gpufir, "-i", inp, "-o", out, "-c", conf, "--backend", "cpu", *extra])
    return read_wav(out), log


def learned_filter(x, y_full, taps):
    """The FIR gpufir applied: y_full (--tail --causal) = h * x exactly, so H = Y / X on a long FFT."""
    m = 1 << int(np.ceil(np.log2(len(y_full) + 1)))
    h = np.fft.irfft(np.fft.rfft(y_full, m) / np.fft.rfft(x, m), m)
    return h[:taps]


def sox_case(tmp, name, noise_for_profile, noisy, amount):
    prof = os.path.join(tmp, name + ".prof")
    nz, inp, out = (os.path.join(tmp, name + x) for x in ("-noise.wav", "-in.wav", "-sox.wav"))
    write_wav(nz, noise_for_profile)
    write_wav(inp, noisy)
    subprocess.run(["sox", "-V1", nz, "-n", "noiseprof", prof], check=True)
    subprocess.run(["sox", "-V1", inp, "-e", "floating-point", "-b", "32", out, "noisered", prof, str(amount)],
                   check=True)
    y = read_wav(out)
    return np.concatenate([y, np.zeros(max(0, len(noisy) - len(y)))])[:len(noisy)]


def db_ratio(a, b):
    return 10 * np.log10(np.sum(a ** 2) / np.sum(b ** 2))


def apply_aligned(h, x):
    d = (len(h) - 1) // 2
    return fftconvolve(x, h)[d:d + len(x)]


def mag_error_db(h_lin, h_min, floor_db=-60.0):
    m = 1 << 16
    a, b = np.abs(np.fft.rfft(h_lin, m)), np.abs(np.fft.rfft(h_min, m))
    ref = 20 * np.log10(a + 1e-300)
    keep = ref > floor_db + 20 * np.log10(a.max())
    return np.max(np.abs(ref[keep] - 20 * np.log10(b[keep] + 1e-300)))


def learned_case(gpufir, tmp, name, s, nz, profile, use_input, phase="linear"):
    """SNR of the aligned output; the filter recovered exactly; noise reduction and speech distortion."""
    write_wav(os.path.join(tmp, name + "-noise.wav"), profile)
    conf = ('filters = ( { name = "dn"; design = "denoise"; noise = "%s-noise.wav";\n'
            '  reduction_db = 12.0; use_input = %s; phase = "%s"; } );\nchain = ["dn"];\n'
            % (name, "true" if use_input else "false", phase))
    noisy = s + nz
    y, log = gpufir_run(gpufir, tmp, name, conf, noisy)
    assert len(y) == len(noisy), (len(y), len(noisy))
    yf, _ = gpufir_run(gpufir, tmp, name, conf, noisy, "--tail", "--causal")
    taps = len(yf) - len(noisy) + 1
    h = learned_filter(noisy, yf, taps)
    hs = apply_aligned(h, s) if phase == "linear" else fftconvolve(s, h)[:len(s)]
    hn = apply_aligned(h, nz) if phase == "linear" else fftconvolve(nz, h)[:len(s)]
    found = [l.split("gpufir: ")[-1] for l in log.splitlines() if "Welch" in l]
    return {"in": snr(s, noisy), "out": snr(s, y), "nr": db_ratio(nz, hn), "dist": db_ratio(hs - s, s),
            "h": h, "log": found[0] if found else ""}


def main():
    gpufir = sys.argv[1]
    with_sox = "--sox" in sys.argv
    for tool in ("espeak-ng", "sox"):
        if not shutil.which(tool):
            print("SKIP: %s not found" % tool)
            sys.exit(77)
    rng = np.random.default_rng(12)
    tmp = tempfile.mkdtemp(prefix="gpufir-denoise-")
    try:
        s = speech(tmp)
        lead = np.zeros(int(0.3 * RATE))
        s = np.concatenate([lead, s, lead])
        n = len(s)
        print("speech: %.2f s at %.1f dBFS RMS" % (n / RATE, rms_db(s)))
        results = {}
        cases = (("white", lambda m: rng.standard_normal(m), -35.0),
                 ("pink", lambda m: pink(m, rng), -30.0),
                 ("room", lambda m: room(m, rng), -28.0))
        for name, gen, level in cases:
            noise = scale_to(gen(n + 5 * RATE), level)
            profile, nz = noise[:5 * RATE], noise[5 * RATE:]   # two different stretches of one noise
            w = learned_case(gpufir, tmp, name + "-w", s, nz, profile, True)
            p = learned_case(gpufir, tmp, name + "-p", s, nz, profile, False)
            mp = learned_case(gpufir, tmp, name + "-m", s, nz, profile, True, "minimum")
            results[name] = (w, p)
            print("%s noise at %.0f dBFS RMS, input SNR %.2f dB:" % (name, level, w["in"]))
            for tag, r in (("offline (use_input, Wiener)", w), ("noise alone (use_input = false, as live)", p)):
                print("  learned filter, %s: SNR %.2f dB (%+.2f dB); noise %.1f dB down; speech distortion "
                      "%.1f dB" % (tag, r["out"], r["out"] - r["in"], r["nr"], r["dist"]))
            print("  minimum-phase version: magnitude error %.4f dB where above -60 dB; noise %.1f dB down"
                  % (mag_error_db(w["h"], mp["h"]), mp["nr"]))
            if with_sox:
                noisy = s + nz
                for amt in (0.21, 0.3):
                    ysx = sox_case(tmp, name + "-%g" % amt, profile, noisy, amt)
                    ysc = sox_case(tmp, name + "-c%g" % amt, profile, s, amt)
                    print("  SoX noiseprof + noisered %g: SNR %.2f dB (%+.2f dB); speech distortion (clean "
                          "speech through noisered alone) %.1f dB" % (amt, snr(s, ysx), snr(s, ysx) - w["in"],
                                                                        db_ratio(ysc - s, s)))
            print("  log: " + w["log"])
        # the default chain on hum (off 50 Hz by a few hundredths) + white hiss
        f0 = 50.03
        noise = hum(n, f0, rng) + scale_to(rng.standard_normal(n), -42.0)
        noisy = s + noise
        inp, out = os.path.join(tmp, "hum-in.wav"), os.path.join(tmp, "hum-out.wav")
        write_wav(inp, noisy)
        run([gpufir, "-i", inp, "-o", out, "--backend", "cpu"])
        y = read_wav(out)
        write_wav(inp, s)
        run([gpufir, "-i", inp, "-o", out, "--backend", "cpu"])
        ys = read_wav(out)
        hum_in, hum_out = snr(s, noisy), snr(s, y)
        # the same, the hum found rather than guessed (freq_hz = "auto"), narrower notches
        auto = ('filters = (\n'
                '  { name = "rumble"; design = "highpass"; cutoff_hz = 60.0; transition_hz = 80.0;\n'
                '    attenuation_db = 40.0; },\n'
                '  { name = "hum"; design = "notch"; freq_hz = "auto"; bandwidth_hz = 4.0; attenuation_db = 40.0; },\n'
                '  { name = "hiss"; design = "lowpass"; cutoff_hz = 14000.0; transition_hz = 2000.0;\n'
                '    attenuation_db = 60.0; } );\nchain = ["rumble", "hum", "hiss"];\n')
        ya, alog = gpufir_run(gpufir, tmp, "auto", auto, noisy)
        found = [l.split("gpufir: ")[-1] for l in alog.splitlines() if "mains hum found" in l]
        auto_out = snr(s, ya)
        print("default chain, hum %.2f Hz + 3 harmonics + hiss at -42 dBFS: SNR %.2f -> %.2f dB (%+.2f dB); "
              "speech distortion %.1f dB" % (f0, hum_in, hum_out, hum_out - hum_in, db_ratio(ys - s, s)))
        print("same, hum found (freq_hz = \"auto\", 4 Hz notches): SNR %.2f dB (%+.2f dB); log: %s"
              % (auto_out, auto_out - hum_in, found[0] if found else "(nothing found)"))
        assert found and "50.03" in found[0], found
        assert auto_out - hum_in > 12.0, (hum_in, auto_out)
        # bounds (margins below what was measured; the noise is seeded)
        for name, (w, p) in results.items():
            assert w["out"] - w["in"] > {"white": 4.0, "pink": 4.0, "room": 8.0}[name], (name, w["out"], w["in"])
            assert w["dist"] < -12.0, (name, w["dist"])
        assert results["room"][1]["out"] - results["room"][1]["in"] > 3.0   # the prior helps colored noise
        assert results["white"][1]["out"] - results["white"][1]["in"] > -0.5  # and does no harm to white
        assert hum_out - hum_in > 12.0, (hum_in, hum_out)
    finally:
        shutil.rmtree(tmp)
    print("test_denoise_snr: OK")


if __name__ == "__main__":  # test_daemon_pipewire.py imports the helpers
    main()
