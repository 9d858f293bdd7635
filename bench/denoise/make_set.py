#!/usr/bin/env python3
"""Builds the denoising benchmark's test set (bench/bench-denoise.sh): 16 kHz mono float WAV.

  make_set.py OUTDIR [--quick] [--seed N]

Speech: espeak-ng (Harvard sentences, two per utterance, three voices) and the recorded
voice that Debian's alsa-utils ships (/usr/share/sounds/alsa/{Front,Rear,Side}_*.wav,
48 kHz, resampled to 16 kHz), each padded with 0.5 s of silence before and 0.3 s after,
so that adaptive systems hear some noise alone first.

Noises (all from one seeded generator):
  white      Gaussian white noise
  pink       1/f power (FFT-shaped), 20 Hz and up
  brown      1/f^2 power (FFT-shaped), 20 Hz and up
  babble     six other espeak-ng voices (other languages) reading other sentences, summed
  hum        mains hum: 50.02 Hz and harmonics to 950 Hz (odd ones stronger), random
             phases, with a white floor 35 dB below it
  fan        white noise low-passed at 500 Hz (2nd order) plus tones at 120, 240, 1230 Hz
  levelstep  pink noise whose level jumps every 0.7-1.3 s to a random level in -12..+6 dB
white, pink, brown, hum and fan are stationary; babble and levelstep are not.

Each noise is mixed at 0, 5 and 10 dB SNR, the SNR being the energy ratio of the padded
speech and the noise over the whole file. For each noisy file a separate noise-only sample
(4 s of the same noise process, taken after the mixed part: no sample in common, and for
babble from another stretch of the babble) at the same scale is written for the systems that
take a noise profile. The clean utterances are written too (transparency: clean in, clean
out), each with a "quiet room" profile: white noise 40 dB below the speech.

Writes OUTDIR/{clean,noisy,noise}/*.wav and OUTDIR/manifest.json.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import scipy.signal as signal
import soundfile as sf

RATE = 16000
SPEECH_DBFS = -28.0  # RMS of the padded utterance; with 0 dB SNR noise, peaks stay below full scale
NOISE_SAMPLE_S = 4.0
PAD_BEFORE_S, PAD_AFTER_S = 0.5, 0.3

SENTENCES = [
    "The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background.",
    "It is easy to tell the depth of a well. These days a chicken leg is a rare dish.",
    "Rice is often served in round bowls. The juice of lemons makes fine punch.",
    "The box was thrown beside the parked truck. The hogs were fed chopped corn and garbage.",
    "Four hours of steady work faced us. A large size in stockings is hard to sell.",
    "The boy was there when the sun rose. A rod is used to catch pink salmon.",
]
VOICES = ["en-us", "en-gb+f3", "en-gb-scotland+m3"]
BABBLE_VOICES = ["de", "fr+f2", "es", "it+f4", "nl+m2", "pl+f1"]
BABBLE_TEXT = [
    "The source of the huge river is the clear spring. Kick the ball straight and follow through.",
    "Help the woman get back to her feet. A pot of tea helps to pass the evening.",
    "Smoky fires lack flame and heat. The soft cushion broke the man's fall.",
    "The salt breeze came across from the sea. The girl at the booth sold fifty bonds.",
    "The small pup gnawed a hole in the sock. The fish twisted and turned on the bent hook.",
    "Press the pants and sew a button on the vest. The swan dive was far short of perfect.",
    "The beauty of the view stunned the young boy. Two blue fish swam in the tank.",
    "Her purse was full of useless trash. The colt reared and threw the tall rider.",
]
ALSA_DIR = "/usr/share/sounds/alsa"
ALSA_UTTS = {
    "alsa-front": ["Front_Center", "Front_Left", "Front_Right"],
    "alsa-rear": ["Rear_Center", "Rear_Left", "Rear_Right", "Side_Left", "Side_Right"],
}
NOISES = ["white", "pink", "brown", "babble", "hum", "fan", "levelstep"]
STATIONARY = {"white", "pink", "brown", "hum", "fan"}
SNRS = [0, 5, 10]


def db(x):
    return 10.0 ** (x / 20.0)


def rms(x):
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))


def espeak(text, voice, speed=160):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.wav")
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", path, text], check=True,
                       stdout=subprocess.DEVNULL)
        x, rate = sf.read(path, dtype="float64")
    if x.ndim > 1:
        x = x.mean(axis=1)
    g = np.gcd(RATE, rate)
    return signal.resample_poly(x, RATE // g, rate // g)


def alsa_voice(names):
    parts = []
    for name in names:
        x, rate = sf.read(os.path.join(ALSA_DIR, name + ".wav"), dtype="float64")
        if x.ndim > 1:
            x = x.mean(axis=1)
        g = np.gcd(RATE, rate)
        parts += [signal.resample_poly(x, RATE // g, rate // g), np.zeros(int(0.3 * RATE))]
    return np.concatenate(parts[:-1])


def trim(x, floor_db=-50.0):
    """Cuts leading and trailing silence (below floor_db of the peak)."""
    idx = np.flatnonzero(np.abs(x) > np.max(np.abs(x)) * db(floor_db))
    return x[idx[0]:idx[-1] + 1] if len(idx) else x


def shaped(rng, n, exponent):
    """Gaussian noise with power ~ 1/f^exponent from 20 Hz up (flat 0..20 Hz ramp to 0 at DC)."""
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1.0 / RATE)
    gain = np.where(f >= 20.0, np.maximum(f, 20.0) ** (-exponent / 2.0), 0.0)
    gain *= np.clip(f / 20.0, 0.0, 1.0)  # fade in below 20 Hz: no DC drift
    y = np.fft.irfft(spec * gain, n)
    return y / rms(y)


class Babble:
    """A long babble track from six voices; non-overlapping stretches are handed out in turn."""

    def __init__(self, rng, seconds):
        n = int(seconds * RATE)
        self.track = np.zeros(n)
        for i, voice in enumerate(BABBLE_VOICES):
            talker = []
            k = i
            while sum(len(t) for t in talker) < n:
                talker.append(trim(espeak(BABBLE_TEXT[k % len(BABBLE_TEXT)], voice, speed=170)))
                talker.append(np.zeros(int(rng.uniform(0.05, 0.3) * RATE)))
                k += 1
            t = np.concatenate(talker)
            t = np.roll(t[:n], int(rng.integers(0, n)))
            self.track += t / rms(t)
        self.track /= rms(self.track)
        self.pos = 0

    def take(self, n):
        if self.pos + n > len(self.track):
            raise RuntimeError("babble track too short for the set")
        out = self.track[self.pos:self.pos + n]
        self.pos += n
        return out / rms(out)


def noise(kind, rng, n, babble):
    t = np.arange(n) / RATE
    if kind == "white":
        y = rng.standard_normal(n)
    elif kind == "pink":
        y = shaped(rng, n, 1.0)
    elif kind == "brown":
        y = shaped(rng, n, 2.0)
    elif kind == "babble":
        y = babble.take(n)
    elif kind == "hum":
        f0 = 50.02
        y = np.zeros(n)
        for k in range(1, 20):
            amp = (1.0 if k % 2 else 0.4) / k
            y += amp * np.sin(2 * np.pi * f0 * k * t + rng.uniform(0, 2 * np.pi))
        y /= rms(y)
        y += db(-35.0) * rng.standard_normal(n)
    elif kind == "fan":
        b, a = signal.butter(2, 500.0, fs=RATE)
        y = signal.lfilter(b, a, rng.standard_normal(n))
        y /= rms(y)
        for f, lev in ((120.0, -6.0), (240.0, -12.0), (1230.0, -14.0)):
            y += db(lev) * np.sqrt(2) * np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi))
    elif kind == "levelstep":
        y = shaped(rng, n, 1.0)
        gain = np.empty(n)
        i = 0
        while i < n:
            step = int(rng.uniform(0.7, 1.3) * RATE)
            gain[i:i + step] = db(rng.uniform(-12.0, 6.0))
            i += step
        # 5 ms ramps between levels, as a real level change has (no clicks)
        ramp = int(0.005 * RATE)
        gain = np.convolve(gain, np.ones(ramp) / ramp, mode="same")
        y *= gain
    else:
        raise ValueError(kind)
    return y / rms(y)


def write(path, x):
    peak = np.max(np.abs(x))
    if peak >= 1.0:
        raise RuntimeError(f"{path}: peak {peak:.3f} would clip")
    sf.write(path, x.astype(np.float32), RATE, subtype="FLOAT")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--quick", action="store_true",
                    help="2 utterances, 3 noises (white, hum, babble), 5 dB only")
    ap.add_argument("--seed", type=int, default=20261201)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    for sub in ("clean", "noisy", "noise"):
        os.makedirs(os.path.join(args.outdir, sub), exist_ok=True)

    utts = {}
    for v, voice in enumerate(VOICES):
        for s in range(2):
            utts[f"espeak{v + 1}{'ab'[s]}"] = (voice, SENTENCES[2 * v + s])
    for name in ALSA_UTTS:
        utts[name] = ("alsa", name)
    noises, snrs = NOISES, SNRS
    if args.quick:
        utts = {k: utts[k] for k in ("espeak1a", "alsa-front")}
        noises, snrs = ["white", "hum", "babble"], [5]

    speech = {}
    for name, (voice, what) in utts.items():
        x = alsa_voice(ALSA_UTTS[what]) if voice == "alsa" else trim(espeak(what, voice))
        x = np.concatenate([np.zeros(int(PAD_BEFORE_S * RATE)), x, np.zeros(int(PAD_AFTER_S * RATE))])
        speech[name] = x * db(SPEECH_DBFS) / rms(x)

    need = sum(len(x) + int(NOISE_SAMPLE_S * RATE) for x in speech.values()) * len(snrs)
    babble = Babble(rng, need / RATE + 5.0) if "babble" in noises else None

    items = []
    for name, s in speech.items():
        clean = os.path.join("clean", f"{name}.wav")
        write(os.path.join(args.outdir, clean), s)
        prof = os.path.join("noise", f"{name}__quiet.wav")
        write(os.path.join(args.outdir, prof),
              rng.standard_normal(int(NOISE_SAMPLE_S * RATE)) * db(SPEECH_DBFS - 40.0))
        items.append(dict(id=f"{name}__clean", utt=name, noise="clean", snr=None, clean=clean,
                          input=clean, noise_sample=prof, stationary=None,
                          seconds=len(s) / RATE))
        for kind in noises:
            for snr in snrs:
                n_mix, n_prof = len(s), int(NOISE_SAMPLE_S * RATE)
                if kind == "babble":
                    nz = np.concatenate([babble.take(n_mix), babble.take(n_prof)])
                else:
                    nz = noise(kind, rng, n_mix + n_prof, babble)
                scale = rms(s) / rms(nz[:n_mix]) * db(-snr)
                ident = f"{name}__{kind}__{snr}dB"
                noisy = os.path.join("noisy", ident + ".wav")
                prof = os.path.join("noise", ident + ".wav")
                write(os.path.join(args.outdir, noisy), s + scale * nz[:n_mix])
                write(os.path.join(args.outdir, prof), scale * nz[n_mix:])
                items.append(dict(id=ident, utt=name, noise=kind, snr=snr, clean=clean, input=noisy,
                                  noise_sample=prof, stationary=kind in STATIONARY,
                                  seconds=n_mix / RATE))
    with open(os.path.join(args.outdir, "manifest.json"), "w") as f:
        json.dump(dict(rate=RATE, seed=args.seed, quick=args.quick, items=items), f, indent=1)
    n_noisy = sum(1 for it in items if it["noise"] != "clean")
    secs = sum(it["seconds"] for it in items)
    print(f"make_set: {len(speech)} utterances, {n_noisy} noisy files, {len(speech)} clean, "
          f"{secs:.1f} s of audio in {args.outdir}", file=sys.stderr)


if __name__ == "__main__":
    main()
