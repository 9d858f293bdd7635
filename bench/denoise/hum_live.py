#!/usr/bin/env python3
"""Live hum removal against offline, on the denoising set's hum files (docs/denoise.md).

  hum_live.py --set SETDIR --gpufir PATH [--noise hum] [--jobs N]

Runs three configurations on every noisy file of one noise (hum by default) and prints the mean
SI-SDR gain over the noisy input per SNR and per utterance:
  offline          the built-in chain, no -c: hum measured in the file, linear-phase notches
  live             the built-in chain as the daemon runs it at 16 kHz: the hum notch and the
                   suppressor, phase = "minimum", --causal (the hum is measured in the file, as the
                   tracker finds it 4 to 6 s into a live stream, and removed however the build
                   removes it live)
  live, no notch   the suppressor alone, phase = "minimum", --causal
Outputs are aligned with their input as run.py aligns them. The set comes from make_set.py
(bench/bench-denoise.sh builds it and the venv this needs).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from multiprocessing import Pool

import numpy as np
import soundfile as sf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import align, si_sdr  # noqa: E402

NR = '{ name = "nr"; design = "suppress"; reduction_db = 15.0; highpass_hz = 25.0; }'
HUM = ('{ name = "hum"; design = "notch"; freq_hz = "auto"; harmonics = 4; bandwidth_hz = 15.0; '
       'attenuation_db = 40.0; }')
CONFIGS = [
    ("offline (built-in chain)", None, False),
    ("live (built-in chain, minimum, causal)",
     f'filters = ( {HUM}, {NR} );\nchain = ["hum", "nr"];\nphase = "minimum";\n', True),
    ("live, no notch (suppressor alone)", f'filters = ( {NR} );\nchain = ["nr"];\nphase = "minimum";\n',
     True),
]


def one(job):
    exe, setdir, item, conf, causal, work = job
    inp, clean = os.path.join(setdir, item["input"]), os.path.join(setdir, item["clean"])
    fd, out = tempfile.mkstemp(suffix=".wav", dir=work)
    os.close(fd)
    cmd = [exe, "-q", "-i", inp, "-o", out] + (["-c", conf] if conf else []) + (["--causal"] if causal else [])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c, _ = sf.read(clean, dtype="float64")
    x, _ = sf.read(inp, dtype="float64")
    y, _ = sf.read(out, dtype="float64")
    os.unlink(out)
    y, _ = align(y, x)
    return item["snr"], item["utt"], si_sdr(c, y) - si_sdr(c, x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", required=True)
    ap.add_argument("--gpufir", required=True)
    ap.add_argument("--noise", default="hum")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    a = ap.parse_args()
    with open(os.path.join(a.set, "manifest.json")) as f:
        items = [it for it in json.load(f)["items"] if it.get("noise") == a.noise]
    if not items:
        sys.exit(f"hum_live: no {a.noise} files in {a.set}")
    with tempfile.TemporaryDirectory() as work, Pool(a.jobs) as pool:
        for label, text, causal in CONFIGS:
            conf = None
            if text:
                conf = os.path.join(work, "c.conf" if causal else "o.conf")
                with open(conf, "w") as f:
                    f.write(text)
            res = pool.map(one, [(a.gpufir, a.set, it, conf, causal, work) for it in items])
            by_snr, by_utt = {}, {}
            for snr, utt, d in res:
                by_snr.setdefault(snr, []).append(d)
                by_utt.setdefault(utt, []).append(d)
            print(f"{label}: mean {np.mean([d for _, _, d in res]):+.2f} dB over {len(res)} files; "
                  + ", ".join(f"{s} dB {np.mean(v):+.2f}" for s, v in sorted(by_snr.items())) + "; "
                  + ", ".join(f"{u} {np.mean(v):+.1f}" for u, v in sorted(by_utt.items())))


if __name__ == "__main__":
    main()
