/**
 * @file suppress_hum.h
 * Mains hum removed inside the suppressor's frames, with no phase and no
 * latency: a deeper floor for the gain in the hum's bins.
 *
 * The frames (suppress.h) put their bins about 42 Hz apart at every rate,
 * wider than a hum notch, and the square-root Hann window spreads a steady
 * tone over the bins within 1.5 of it: a harmonic at 50 or 100 Hz shares its
 * bins with the voice's lowest harmonics. A fixed cut there (a notch's
 * width of 42 Hz bins) takes the voice with the hum: on the denoising
 * bench's hum files it cost more SI-SDR than the hum it removed
 * (docs/denoise.md). So the hum's bins are not cut but may be cut further:
 * the Wiener gain's floor, g_min elsewhere, is g_min times M there, where M
 * is GF_SUPPRESS_HUM_DEPTH_DB down within GF_SUPPRESS_HUM_CORE_BINS of a
 * harmonic and rises linearly to 1 over GF_SUPPRESS_HUM_TAPER_BINS more
 * (where harmonics overlap, the lower wins). Where the hum rules a bin (the
 * noise estimate holds it) the gain falls to that floor; where the voice
 * stands above it, the gain opens as anywhere else. The gain stays real: it
 * turns no phase, unlike a minimum-phase notch comb, which turns the phase of
 * the voice around every harmonic and costs the voice more than the hum.
 *
 * The floor takes the place of g_min where the gain is formed
 * (gf_suppress_bins_run): the recursions are otherwise the same, and a
 * suppressor without hum is the same bits as one that never had any. With
 * reduction_db = 0 (g_min = 1: no noise suppression) the frames still run
 * and the gain is 1 except in the hum's bins.
 *
 * The harmonics change at run time (the daemon's hum tracker): the table
 * reaches the audio thread through a gf_suppress_gain_slot, without a lock
 * or a wait.
 */
#ifndef GPUFIR_SUPPRESS_HUM_H
#define GPUFIR_SUPPRESS_HUM_H

#include <stdatomic.h>
#include <stdint.h>

/** The most harmonics one set holds (as many as a notch filter looks at). */
#define GF_SUPPRESS_HUM_MAX 128u
/** M at a harmonic's centre bins, dB (below g_min; the a priori SNR's own floor, -25 dB, then bounds
 * the gain: beyond 15 dB the depth changed nothing on the bench). */
#define GF_SUPPRESS_HUM_DEPTH_DB 30.0
/** Bins either side of a harmonic (fractional) that take the full depth. */
#define GF_SUPPRESS_HUM_CORE_BINS 0.5
/** Bins beyond the core over which M rises back to 1. */
#define GF_SUPPRESS_HUM_TAPER_BINS 1.0

/** Mains hum as the tracker finds it: a fundamental and which of its harmonics stand out. */
struct gf_suppress_hum {
	double f0_hz;				/**< 0: none */
	uint32_t n;				/**< harmonics in harmonic[] */
	uint32_t harmonic[GF_SUPPRESS_HUM_MAX]; /**< their numbers, 1 = the fundamental */
};

/**
 * M for the harmonics of @p h up to @p top (and below half the rate) into @p mask, @p nb =
 * @p n / 2 + 1 bins of an @p n-point frame at @p rate; 1 away from them. @return 1 when M is 1 in
 * every bin (no hum to remove), else 0. Any thread; no allocation.
 */
int gf_suppress_hum_mask(float *mask, uint32_t nb, uint32_t n, uint32_t rate, const struct gf_suppress_hum *h,
			 uint32_t top);

/**
 * A table (here: the floor per bin) handed from the control thread to the audio thread with neither a lock
 * nor a wait (a triple buffer): the writer fills the back table and swaps it with the middle one, marked
 * fresh; the reader, once a frame, swaps its front table with the middle one where that is fresh.
 * The reader always sees one whole table; a table published twice before it looks is replaced.
 * One writer thread and one reader thread.
 */
struct gf_suppress_gain_slot {
	float *t[3];	      /* nb floats each */
	uint8_t ones[3];      /* table i is all ones: the frames skip the product */
	_Atomic unsigned mid; /* the middle table's index, | GF_SUPPRESS_GAIN_FRESH once published */
	unsigned back;	      /* the writer's */
	unsigned front;	      /* the reader's */
	uint32_t nb;
};

/** Point @p s at 3 x @p nb floats of @p mem, every table @p init (NULL: all ones). Control thread. */
void gf_suppress_gain_slot_init(struct gf_suppress_gain_slot *s, float *mem, uint32_t nb, const float *init);

/** The table the writer fills next (nb floats). Writer thread. */
float *gf_suppress_gain_slot_back(struct gf_suppress_gain_slot *s);

/** Hand the back table over (@p ones: it is all ones). Writer thread; RT-safe. */
void gf_suppress_gain_slot_publish(struct gf_suppress_gain_slot *s, int ones);

/**
 * The newest table (NULL: all ones); *@p changed (where not NULL) 1 when it is another than the
 * last call's. Reader thread; RT-safe.
 */
const float *gf_suppress_gain_slot_take(struct gf_suppress_gain_slot *s, int *changed);

#endif
