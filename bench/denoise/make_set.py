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

The clean set (transparency) is wider than the noisy one: besides the utterances above, one
Harvard pair from each of three more espeak-ng voices (CLEAN_VOICES) and the second recorded
voice Debian ships, sound-theme-freedesktop's (/usr/share/sounds/freedesktop/stereo/
audio-channel-*.oga, 48 kHz), in two utterances as alsa-utils' are joined. Every clean
utterance is written twice: at 16 kHz, and at 48 kHz (espeak-ng's 22.05 kHz resampled, the
recordings at their own rate), for systems run at 48 kHz and scored at 16 kHz.

Writes OUTDIR/{clean,clean48,noisy,noise}/*.wav and OUTDIR/manifest.json.
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
# Voices heard clean only (transparency), each reading one more Harvard pair.
CLEAN_VOICES = ["en-us+f2", "en-gb-x-rp+m7", "en-029+f4"]
CLEAN_SENTENCES = [
    "The pipe began to rust while new. Open the crate but don't break the glass.",
    "Add the sum to the product of these three. The wrist was badly strained and hung limp.",
    "A saw is a tool used for making boards. March the soldiers past the next hill.",
]
RATE48 = 48000
# Recorded voices that Debian packages ship: directory, file pattern, and utterances.
RECORDED = {
    "alsa": ("/usr/share/sounds/alsa", "{}.wav", {
        "alsa-front": ["Front_Center", "Front_Left", "Front_Right"],
        "alsa-rear": ["Rear_Center", "Rear_Left", "Rear_Right", "Side_Left", "Side_Right"],
    }),
    "fdo": ("/usr/share/sounds/freedesktop/stereo", "audio-channel-{}.oga", {
        "fdo-front": ["front-center", "front-left", "front-right"],
        "fdo-rear": ["rear-center", "rear-left", "rear-right", "side-left", "side-right"],
    }),
}
NOISY_RECORDED = ("alsa-front", "alsa-rear")  # the noisy set's recorded utterances
NOISES = ["white", "pink", "brown", "babble", "hum", "fan", "levelstep"]
STATIONARY = {"white", "pink", "brown", "hum", "fan"}
SNRS = [0, 5, 10]


def db(x):
    return 10.0 ** (x / 20.0)


def rms(x):
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))


def resample(x, rate, to):
    g = np.gcd(to, rate)
    return x if rate == to else signal.resample_poly(x, to // g, rate // g)


def read_mono(path):
    x, rate = sf.read(path, dtype="float64")
    return (x.mean(axis=1) if x.ndim > 1 else x), rate


def espeak(text, voice, speed=160, to=RATE):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.wav")
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", path, text], check=True,
                       stdout=subprocess.DEVNULL)
        x, rate = read_mono(path)
    return resample(x, rate, to)


def recorded_voice(source, utt, to=RATE):
    """A recorded utterance: the package's clips joined with 0.3 s gaps, at rate @p to."""
    folder, pattern, utts = RECORDED[source]
    parts = []
    for name in utts[utt]:
        x, rate = read_mono(os.path.join(folder, pattern.format(name)))
        parts += [resample(x, rate, to), np.zeros(int(0.3 * to))]
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


def write(path, x, rate=RATE):
    peak = np.max(np.abs(x))
    if peak >= 1.0:
        raise RuntimeError(f"{path}: peak {peak:.3f} would clip")
    sf.write(path, x.astype(np.float32), rate, subtype="FLOAT")


def utterance(voice, what, to):
    """One utterance at rate @p to, padded and at SPEECH_DBFS."""
    x = recorded_voice(voice, what, to) if voice in RECORDED else trim(espeak(what, voice, to=to))
    x = np.concatenate([np.zeros(int(PAD_BEFORE_S * to)), x, np.zeros(int(PAD_AFTER_S * to))])
    return x * db(SPEECH_DBFS) / rms(x)


def clean_items(outdir, name, voice, what, x16, rng16, rng48):
    """The clean utterance at 16 and at 48 kHz, each with its "quiet room" profile (drawn from
    @p rng16 and @p rng48: the noisy set's generator sees the draws it always saw)."""
    items = []
    for sub, rate, x, rng in (("clean", RATE, x16, rng16),
                              ("clean48", RATE48, utterance(voice, what, RATE48), rng48)):
        clean = os.path.join(sub, f"{name}.wav")
        write(os.path.join(outdir, clean), x, rate)
        prof = os.path.join("noise", f"{name}__quiet{'' if rate == RATE else '48'}.wav")
        write(os.path.join(outdir, prof),
              rng.standard_normal(int(NOISE_SAMPLE_S * rate)) * db(SPEECH_DBFS - 40.0), rate)
        tag = "clean" if rate == RATE else "clean48"
        items.append(dict(id=f"{name}__{tag}", utt=name, noise=tag, snr=None, clean=clean,
                          input=clean, noise_sample=prof, stationary=None, rate=rate,
                          seconds=len(x) / rate))
    return items


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--quick", action="store_true",
                    help="2 utterances, 3 noises (white, hum, babble), 5 dB only")
    ap.add_argument("--seed", type=int, default=20261201)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    rng_clean = np.random.default_rng(args.seed + 1)  # the clean set's extra profiles
    for sub in ("clean", "clean48", "noisy", "noise"):
        os.makedirs(os.path.join(args.outdir, sub), exist_ok=True)

    utts = {}
    for v, voice in enumerate(VOICES):
        for s in range(2):
            utts[f"espeak{v + 1}{'ab'[s]}"] = (voice, SENTENCES[2 * v + s])
    for name in NOISY_RECORDED:
        utts[name] = ("alsa", name)
    clean_only = {f"espeak-clean{v + 1}": (voice, CLEAN_SENTENCES[v])
                  for v, voice in enumerate(CLEAN_VOICES)}
    clean_only.update({name: ("fdo", name) for name in RECORDED["fdo"][2]})
    noises, snrs = NOISES, SNRS
    if args.quick:
        utts = {k: utts[k] for k in ("espeak1a", "alsa-front")}
        clean_only = {k: clean_only[k] for k in ("fdo-front",)}
        noises, snrs = ["white", "hum", "babble"], [5]

    speech = {name: utterance(voice, what, RATE) for name, (voice, what) in utts.items()}
    need = sum(len(x) + int(NOISE_SAMPLE_S * RATE) for x in speech.values()) * len(snrs)
    babble = Babble(rng, need / RATE + 5.0) if "babble" in noises else None

    items = []
    for name, (voice, what) in clean_only.items():
        items += clean_items(args.outdir, name, voice, what, utterance(voice, what, RATE),
                             rng_clean, rng_clean)
    for name, s in speech.items():
        items += clean_items(args.outdir, name, *utts[name], s, rng, rng_clean)
        clean = os.path.join("clean", f"{name}.wav")
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
                                  noise_sample=prof, stationary=kind in STATIONARY, rate=RATE,
                                  seconds=n_mix / RATE))
    with open(os.path.join(args.outdir, "manifest.json"), "w") as f:
        json.dump(dict(rate=RATE, seed=args.seed, quick=args.quick, items=items), f, indent=1)
    n_noisy = sum(1 for it in items if it["snr"] is not None)
    n_clean = len(items) - n_noisy
    secs = sum(it["seconds"] for it in items)
    print(f"make_set: {len(speech)} utterances, {n_noisy} noisy files, {n_clean} clean (16 and "
          f"48 kHz), "
          f"{secs:.1f} s of audio in {args.outdir}", file=sys.stderr)


if __name__ == "__main__":
    main()
