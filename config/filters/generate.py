#!/usr/bin/python3
"""Regenerate the example filter files in this folder (deterministic).

eq.txt   - 255-tap linear-phase EQ: +4 dB presence lift around 3 kHz, -3 dB
           above 10 kHz (scipy.signal.firwin2 at 48 kHz), as text.
room.wav - a stereo 48 kHz float32 "room correction" impulse response,
           2400 frames (50 ms): a direct impulse and a few weak, decaying,
           channel-specific correction taps.
"""
import os

import struct

import numpy as np
import scipy.signal

HERE = os.path.dirname(os.path.abspath(__file__))
RATE = 48000


def eq_txt():
    freq = [0, 1500, 2500, 3500, 5000, 9000, 11000, RATE / 2]
    gain_db = [0, 0, 4, 4, 0, 0, -3, -3]
    h = scipy.signal.firwin2(255, freq, 10 ** (np.array(gain_db) / 20.0), fs=RATE)
    with open(os.path.join(HERE, "eq.txt"), "w") as f:
        f.write("# gpufir example EQ: +4 dB around 3 kHz, -3 dB above 10 kHz\n")
        f.write("# 255 taps, linear phase, designed for 48000 Hz (generate.py)\n")
        f.write("# One coefficient per line; '#' starts a comment.\n")
        for x in h:
            f.write("%.9e\n" % x)


def room_wav():
    rng = np.random.default_rng(20261129)
    n = 2400
    t = np.arange(n) / RATE
    ir = np.zeros((n, 2))
    for c in range(2):
        ir[0, c] = 1.0
        ir[1:, c] = 0.02 * rng.standard_normal(n - 1) * np.exp(-t[1:] / 0.008)
    write_float_wav(os.path.join(HERE, "room.wav"), ir.astype("<f4"), RATE)


def write_float_wav(path, frames, rate):
    """IEEE-float WAV written by hand: no timestamped PEAK chunk, so byte-identical reruns."""
    data = frames.tobytes()
    ch = frames.shape[1]
    fmt = struct.pack("<HHIIHH", 3, ch, rate, rate * ch * 4, ch * 4, 32)
    with open(path, "wb") as f:
        f.write(b"RIFF" + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(data)) + b"WAVE")
        f.write(b"fmt " + struct.pack("<I", len(fmt)) + fmt)
        f.write(b"data" + struct.pack("<I", len(data)) + data)


if __name__ == "__main__":
    eq_txt()
    room_wav()
