/**
 * @file live_dll.h
 * The delay-locked loop of the two-clock rate matching (live_clock.c), on
 * its own: pure arithmetic on a small struct, no I/O, no allocation, a
 * fixed number of operations per update (two exp() calls). Any thread; one
 * caller at a time (the playback callback).
 *
 * Input, once per playback callback of n frames at the nominal rate fs: the
 * delay error e (frames: the delay of what is played now minus its target).
 * Output: the ratio c to play the next n frames at (capture frames per
 * playback frame). Between two updates the error moves by
 *     e' = e + n (r - c)            (r: the clocks' true ratio)
 * and the loop is, with T = n / fs the update interval and w = 2 pi bw,
 *     a  = 1 - exp(-w T)                        (the loop's pole, per update)
 *     b  = 1 - exp(-K w T)                      (the error's low-pass, K = 8)
 *     f += b (clip(e - f))                      (filtered error, outliers clipped)
 *     c  = R + 2 a f / n                        (proportional: pulls the delay back)
 *     R += a^2 f / n                            (integrator: converges on r)
 * Without the low-pass this is a critically damped second-order loop,
 * z^2 - (2 - 2a) z + (1 - a)^2, with its double pole at z = exp(-w T): the
 * continuous loop's pole s = -w sampled at the update interval, inside the
 * unit circle for every period, with the same bandwidth in Hz at 16 frames
 * as at 8192. The low-pass, K times wider than the loop, adds a third pole
 * that slows the decay to about 3/4 of the designed rate where it filters
 * (short periods; test_live_clock measures it at each period). The
 * bandwidth starts at GF_DLL_BW_MAX (lock-in) and narrows to GF_DLL_BW_MIN
 * with a time constant of GF_DLL_NARROW_S seconds of audio.
 */
#ifndef GPUFIR_LIVE_DLL_H
#define GPUFIR_LIVE_DLL_H

#include <stdint.h>

#define GF_DLL_BW_MAX 2.0   /* Hz, while locking on */
#define GF_DLL_BW_MIN 0.02  /* Hz, locked: jitter is averaged over ~8 s */
#define GF_DLL_NARROW_S 2.0 /* s: the bandwidth falls from max to min with this time constant */
#define GF_DLL_MAX_DEV 0.05 /* the ratio stays within 5 % of nominal: a safety net only */

struct gf_dll {
	double ratio; /* R: capture frames per playback frame, the clocks' ratio as measured */
	double err;   /* f: low-passed delay error, frames */
	double dev;   /* mean |innovation| (e - f), frames: the clip's scale */
	double age_s; /* audio since the loop started locking on, seconds */
	int primed;   /* err holds a measurement */
};

/** A loop at ratio 1, about to lock on. */
void gf_dll_init(struct gf_dll *d);

/** The delay was set anew (a resync): the next error starts the filter afresh. */
void gf_dll_rejoin(struct gf_dll *d);

/** The loop's bandwidth now, Hz. */
double gf_dll_bandwidth(const struct gf_dll *d);

/**
 * One update: delay error @p e (frames) measured at a callback of @p n
 * frames at nominal rate @p fs. @return the ratio for the next @p n frames,
 * within GF_DLL_MAX_DEV of 1.
 */
double gf_dll_update(struct gf_dll *d, double e, uint32_t n, double fs);

#endif
