#!/usr/bin/env python3
"""Helpers for the offline benchmarks (bench/bench-offline.sh, bench/bench-batch.sh): test
data, the Python peers, checks.

  bench-peers.py gen DIR [SECONDS] [TAPS]  write DIR/in.wav (stereo 48 kHz float32) and
                                           the TAPS filter (non-symmetric) as DIR/taps.txt/.raw,
                                           DIR/gpufir.conf, DIR/ir.wav and DIR/fconv.conf;
                                           prints the WAV data offset
  bench-peers.py scipy DIR                 SciPy oaconvolve, file to file
  bench-peers.py cupy DIR                  CuPy oaconvolve, file to file and on the device
  bench-peers.py cupy-sweep DIR            CuPy oaconvolve on the device, taps 1k..1M
                                           (4M frames x 2 channels: bench_gpu's 2^22-frame calls)
  bench-peers.py check DIR OUT.wav         OUT against a float64 reference (sampled windows)
  bench-peers.py same A.wav B.wav          exit status 0 where A and B hold the same samples
  bench-peers.py corpus DIR N SECONDS TAPS DIR/corpus/cNNNN.wav: N stereo 48 kHz float32 files
                                           (distinct noise), DIR/list.txt, the TAPS filter as
                                           gen writes it

Every timing line starts with 'RESULT name seconds msps' for the shell script.
"""
import os
import sys
import time

import numpy as np
import scipy.io.wavfile as wavfile
import scipy.signal as signal

RATE = 48000


def result(name, seconds, samples, extra=""):
    print(f"RESULT {name} {seconds:.4f} {samples / seconds / 1e6:.1f} {extra}", flush=True)


def data_offset(path):
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    pos = 12
    while pos + 8 <= len(head):
        cid, size = head[pos:pos + 4], int.from_bytes(head[pos + 4:pos + 8], "little")
        if cid == b"data":
            return pos + 8
        pos += 8 + size + (size & 1)
    raise SystemExit(f"{path}: no data chunk")


def write_filter(d, h):
    """The filter h for every program: DIR/taps.txt and .raw, DIR/gpufir.conf, and for
    fconvolver (2 in, 2 out, 1024-frame partitions, the IR on each channel) DIR/ir.wav and
    DIR/fconv.conf."""
    np.savetxt(os.path.join(d, "taps.txt"), h, fmt="%.9e")
    h.tofile(os.path.join(d, "taps.raw"))
    wavfile.write(os.path.join(d, "ir.wav"), RATE, h)
    with open(os.path.join(d, "gpufir.conf"), "w") as f:
        f.write('filters = ( { name = "fir"; file = "taps.txt"; } );\nchain = ["fir"];\n')
    with open(os.path.join(d, "fconv.conf"), "w") as f:
        f.write(f"/cd {os.path.abspath(d)}\n/convolver/new 2 2 1024 {len(h)}\n"
                "/impulse/read 1 1 1 0 0 0 1 ir.wav\n/impulse/read 2 2 1 0 0 0 1 ir.wav\n")


def decaying_noise(rng, taps):
    k = np.arange(taps)
    h = rng.standard_normal(taps) * np.exp(-k / (taps / 4.0))
    return (h / np.sqrt(np.sum(h * h))).astype(np.float32)


def gen(d, seconds=600, taps=65535):
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(20261129)
    n = int(seconds * RATE)
    x = (rng.standard_normal((n, 2), dtype=np.float32) * 0.1).astype(np.float32)
    wavfile.write(os.path.join(d, "in.wav"), RATE, x)
    write_filter(d, decaying_noise(rng, taps))
    print(data_offset(os.path.join(d, "in.wav")))


def corpus(d, n=200, seconds=5, taps=4095):
    os.makedirs(os.path.join(d, "corpus"), exist_ok=True)
    rng = np.random.default_rng(20261201)
    frames = int(seconds * RATE)
    names = []
    for i in range(n):
        x = (rng.standard_normal((frames, 2), dtype=np.float32) * 0.1).astype(np.float32)
        p = os.path.join(d, "corpus", f"c{i:04d}.wav")
        wavfile.write(p, RATE, x)
        names.append(p)
    with open(os.path.join(d, "list.txt"), "w") as f:
        f.write("".join(p + "\n" for p in names))
    write_filter(d, decaying_noise(rng, taps))


def load(d):
    rate, x = wavfile.read(os.path.join(d, "in.wav"))
    h = np.fromfile(os.path.join(d, "taps.raw"), dtype=np.float32)
    return rate, x, h


def scipy_peer(d):
    t0 = time.perf_counter()
    rate, x, h = load(d)
    t1 = time.perf_counter()
    y = signal.oaconvolve(x, h[:, None], mode="full", axes=0)[: len(x)].astype(np.float32)
    t2 = time.perf_counter()
    wavfile.write(os.path.join(d, "out_scipy.wav"), rate, y)
    t3 = time.perf_counter()
    result("scipy_oaconvolve_file", t3 - t0, x.size, f"(compute {t2 - t1:.3f} s)")


def cupy_conv(cp, csig, xd, hd):
    try:
        return csig.oaconvolve(xd, hd[:, None], mode="full", axes=0)[: xd.shape[0]]
    except Exception:  # older CuPy: one channel at a time
        return cp.stack([csig.oaconvolve(xd[:, c], hd, mode="full")[: xd.shape[0]] for c in range(xd.shape[1])], 1)


def cupy_peer(d):
    import cupy as cp
    import cupyx.scipy.signal as csig

    rate, x, h = load(d)
    cupy_conv(cp, csig, cp.asarray(x[:RATE]), cp.asarray(h))  # warm-up: plans, kernels
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    rate, x, h = load(d)
    y = cp.asnumpy(cupy_conv(cp, csig, cp.asarray(x), cp.asarray(h)).astype(cp.float32))
    wavfile.write(os.path.join(d, "out_cupy.wav"), rate, y)
    result("cupy_oaconvolve_file", time.perf_counter() - t0, x.size)
    xd, hd = cp.asarray(x), cp.asarray(h)
    result("cupy_oaconvolve_device", device_time(cp, lambda: cupy_conv(cp, csig, xd, hd)), x.size,
           f"taps {len(h)}")


def device_time(cp, fn, reps=7, warm_s=0.2):
    """Median device time of fn (CUDA events) after warm_s seconds of warm-up
    (the SM clock idles low): the method of bench_gpu's kernel rows."""
    t0 = time.perf_counter()
    fn()
    cp.cuda.Device().synchronize()
    while time.perf_counter() - t0 < warm_s:
        fn()
        cp.cuda.Device().synchronize()
    times = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b) / 1e3)
    return sorted(times)[len(times) // 2]


def cupy_sweep(d):
    import cupy as cp
    import cupyx.scipy.signal as csig

    _, x, _ = load(d)
    xd = cp.asarray(x[: 1 << 22])  # 4M frames x 2 channels on the device
    rng = np.random.default_rng(7)
    for taps in (1024, 4096, 16384, 65536, 262144, 1048576):
        hd = cp.asarray((rng.standard_normal(taps) * np.exp(-np.arange(taps) / (taps / 4))).astype(np.float32))
        t = device_time(cp, lambda: cupy_conv(cp, csig, xd, hd))
        result(f"cupy_device_taps_{taps}", t, xd.size)
        del hd
        cp.get_default_memory_pool().free_all_blocks()


def check(d, out):
    _, x, h = load(d)
    _, y = wavfile.read(out)
    if y.shape != x.shape:
        raise SystemExit(f"check: {out}: shape {y.shape}, input {x.shape}")
    rng = np.random.default_rng(1)
    starts = [0] + list(rng.integers(len(h), len(x) - RATE, 3))
    num = den = 0.0
    h64 = h.astype(np.float64)
    for s in starts:
        e = s + RATE // 2
        lo = max(0, s - len(h) + 1)
        ref = signal.oaconvolve(x[lo:e].astype(np.float64), h64[:, None], mode="full", axes=0)[s - lo: e - lo]
        num += np.sum((y[s:e] - ref) ** 2)
        den += np.sum(ref ** 2)
    err = float(np.sqrt(num / den))
    print(f"CHECK {os.path.basename(out)} rel L2 {err:.2e} over {len(starts)} windows", flush=True)
    return err


def same(a, b):
    """Exit status 0 where the two WAV files hold the same samples, 1 where not."""
    same = np.array_equal(wavfile.read(a)[1], wavfile.read(b)[1])
    print(f"CHECK {'' if same else 'FAILED '}{a} {'equals' if same else 'differs from'} {b}", flush=True)
    sys.exit(0 if same else 1)


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    cmd, d = sys.argv[1], sys.argv[2]
    if cmd == "gen":
        gen(d, *(int(a) for a in sys.argv[3:5]))
    elif cmd == "scipy":
        scipy_peer(d)
    elif cmd == "cupy":
        cupy_peer(d)
    elif cmd == "cupy-sweep":
        cupy_sweep(d)
    elif cmd == "check":
        check(d, sys.argv[3])
    elif cmd == "same" and len(sys.argv) == 4:
        same(d, sys.argv[3])
    elif cmd == "corpus":
        corpus(d, *(int(a) for a in sys.argv[3:6]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
