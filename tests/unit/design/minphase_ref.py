#!/usr/bin/env python3
"""Reference minimum-phase filters for test_minphase (numpy and SciPy).

A minimum-phase FIR g (all zeros inside the unit circle) has a linear-phase
counterpart h = g * reverse(g) with |H| = |G|^2; the minimum-phase filter of
h's magnitude is then g * g, exactly (a closed form). SciPy 1.10's
minimum_phase(h) returns a half-length filter with about sqrt(|H|), which
for this h is g itself: g_s * g_s is a second, independent reference.

Writes DIR/lin.txt (h), DIR/closed.txt (g * g) and DIR/scipy.txt.
"""
import sys

import numpy as np
from scipy.signal import minimum_phase

def main():
    out = sys.argv[1]
    rng = np.random.default_rng(12)
    # 40 zeros: 20 conjugate pairs at radius 0.3..0.95, plus a few real ones
    r = rng.uniform(0.3, 0.95, 20)
    a = rng.uniform(0.0, np.pi, 20)
    zeros = np.concatenate([r * np.exp(1j * a), r * np.exp(-1j * a), [0.9, -0.8, 0.5]])
    g = np.real(np.poly(zeros))
    g /= np.sum(np.abs(g))
    h = np.convolve(g, g[::-1])
    np.savetxt(out + "/lin.txt", h, fmt="%.17g")
    np.savetxt(out + "/closed.txt", np.convolve(g, g), fmt="%.17g")
    gs = minimum_phase(h, method="homomorphic")
    np.savetxt(out + "/scipy.txt", np.convolve(gs, gs), fmt="%.17g")

main()
