/**
 * @file suppress_bins.h
 * The suppressor's per-frame arithmetic on one channel's spectrum (the
 * recursions in suppress.h), apart from framing and transforms so that
 * another backend can run the same steps bin for bin. Engine-internal.
 *
 * Constants are time constants in seconds, turned into per-hop factors by
 * the caller (exp(-hop / tau)), so a frame at any rate behaves alike.
 */
#ifndef GPUFIR_SUPPRESS_BINS_H
#define GPUFIR_SUPPRESS_BINS_H

#include <stdint.h>

#define GF_SUPPRESS_TAU_SMOOTH_S 0.05	/* S: the smoothed power */
#define GF_SUPPRESS_TAU_PRESENCE_S 0.01 /* p: speech presence */
#define GF_SUPPRESS_TAU_NOISE_S 0.2	/* L where speech is absent */
#define GF_SUPPRESS_TAU_DD_S 0.074	/* the decision-directed weight (0.85 at a 12 ms hop) */
#define GF_SUPPRESS_MIN_WINDOW_S 0.8	/* Smin: the minimum of S over the last one to two windows */
#define GF_SUPPRESS_START_S 0.25	/* without a noise sample: L is the plain mean this long */
#define GF_SUPPRESS_PRESENCE_LO 2.0f	/* S / Smin at which speech presence starts */
#define GF_SUPPRESS_PRESENCE_HI 4.0f	/* ... and is certain */
#define GF_SUPPRESS_SNR_LO 4.0f		/* P / L at which speech presence starts */
#define GF_SUPPRESS_SNR_HI 8.0f		/* ... and is certain */
/* ... judged only where S stands above the longer minimum: not at all below STEADY_LO times it,
 * fully from STEADY_HI (1.8 and 4.8 dB). A sound that has sat at its own minimum for the longer
 * window is steady, whatever P / L says: an L left far under it (learnt in digital silence, a
 * mute, a quieter noise) would otherwise read it as speech for good, since a steady sound never
 * dips to let L up, and L's floor under the longer minimum (NOISE_UNDER_MIN) still leaves P / L
 * above SNR_HI. An onset rises above STEADY_HI within a frame or two. */
#define GF_SUPPRESS_STEADY_LO 1.5f
#define GF_SUPPRESS_STEADY_HI 3.0f
/* S over the longer minimum (the last two to three windows, Sold's too) at which speech presence
 * starts, and is certain: 15 and 20 dB. A noise does not swing that far within seconds (a level
 * step of 18 dB reaches the ramp's start); speech over a quiet room does, pause to vowel, so on
 * clean speech the estimate stays what the pauses taught it. */
#define GF_SUPPRESS_LONG_LO 30.0f
#define GF_SUPPRESS_LONG_HI 100.0f
/* L stays at most OVER x Smin and at least UNDER x the longer minimum: a start or a seed taken too
 * high comes down, and a much louder noise is followed once the longer minimum has seen it (the
 * short one would lift L on a long stretch of clean speech to within 10 dB of the speech's own
 * quietest bins). */
#define GF_SUPPRESS_NOISE_UNDER_MIN 0.1f
#define GF_SUPPRESS_NOISE_OVER_MIN 5.0f
/* ... and at least this multiple in a hum's bins (its floor below g_min: suppress_hum.h). The hum is
 * steady, so its minimum is the hum: a hum that starts under a voice is learned there too, where the
 * voice's presence would hold L at its old level (P / L far above 1 reads as speech). */
#define GF_SUPPRESS_HUM_UNDER_MIN 1.0f
#define GF_SUPPRESS_XI_MIN 0.003162f   /* the a priori SNR's floor, -25 dB */
#define GF_SUPPRESS_POWER_FLOOR 1e-12f /* keeps ratios finite in digital silence */
#define GF_SUPPRESS_BIN_ARRAYS 7       /* floats per bin of state: S, Smin, Stmp, p, L, Y2, Sold */
#define GF_SUPPRESS_RAMP_S 0.03	       /* a live change of the floor (depth, bypass) ramps this long */

struct gf_suppress_consts {
	float a_s, a_p, a_d, a_dd; /* per-hop factors of the time constants above */
	float g_min;		   /* the gain's floor, 10^(-reduction_db / 20): the frame's, as ramped */
	uint32_t start_frames;	   /* frames of GF_SUPPRESS_START_S */
	uint32_t ramp_frames;	   /* frames of GF_SUPPRESS_RAMP_S, at least one */
	uint32_t min_window;	   /* frames of GF_SUPPRESS_MIN_WINDOW_S */
};

struct gf_suppress_bins {
	float *S, *Smin, *Stmp, *p, *L, *Y2; /* nb each: state per bin */
	float *Sold; /* nb: Smin as the window before last ended (the longer minimum's other half) */
	uint32_t nb;
	uint32_t frames; /* frames run since reset (saturates) */
	int seeded;	 /* L started from a noise sample */
};

/**
 * The gain's floor as the live controls move it (suppress.h: depth and bypass): a target set at any
 * time, reached in equal linear steps, one a frame, over k.ramp_frames frames. Each frame's step is
 * itself spread over a hop by the overlap-add (the windows' crossfade), so the gain never steps at
 * a sample. Header-only: the CUDA module runs the same steps on its host side.
 */
struct gf_suppress_floor {
	float cur;    /* the floor of the last frame */
	float target; /* where it goes */
	float step;   /* per frame: (target - where the ramp started) / ramp_frames */
};

/** Start at @p g, no ramp. */
static inline void gf_suppress_floor_init(struct gf_suppress_floor *f, float g)
{
	f->cur = f->target = g;
	f->step = 0.0f;
}

/** Ramp from where it is to @p g over @p frames frames (a new target mid-ramp turns it there). */
static inline void gf_suppress_floor_set(struct gf_suppress_floor *f, float g, uint32_t frames)
{
	if (g == f->target)
		return;
	f->target = g;
	f->step = (g - f->cur) / (float)(frames ? frames : 1u);
}

/** The next frame's floor: one step nearer the target, never past it. */
static inline float gf_suppress_floor_next(struct gf_suppress_floor *f)
{
	float next = f->cur + f->step;
	if (f->step == 0.0f || (f->step > 0.0f ? next >= f->target : next <= f->target)) {
		next = f->target;
		f->step = 0.0f;
	}
	f->cur = next;
	return next;
}

struct gf_suppress;

/** What another backend needs to run the same suppressor as a CPU one: its frame, constants, window,
 * noise seed and high-pass table, all computed once by suppress.c, so both start from the same bits.
 * (The CUDA module takes it: a change here is a change of GF_CUDA_MODULE_ABI, cuda_module.h.) */
struct gf_suppress_shape {
	uint32_t n, hop, nb; /* frame length, hop (n / 2), bins (n / 2 + 1) */
	struct gf_suppress_consts k;
	const float *win;      /* n: the square-root Hann window, before the transform and after */
	const float *seed;     /* nb: the noise sample's mean power per bin; NULL: none */
	const float *highpass; /* nb: the zero-phase high-pass's gain per bin (suppress.h); NULL: none */
};

/** The hum's factor on the gain's floor per bin that the frames of @p s apply now (below 1 in the
 * hum's bins: suppress_hum.h, 1 elsewhere; NULL: 1 in every bin); *@p changed 1 when it is another
 * than the last call's. The thread that runs @p s's frames (a GPU suppressor's audio thread, for the
 * table it uploads). */
const float *gf_suppress_hum_take(struct gf_suppress *s, int *changed);

/** The shape of @p s; its pointers stay valid while @p s lives. Any thread. */
void gf_suppress_shape_of(const struct gf_suppress *s, struct gf_suppress_shape *out);

/** Point @p b at GF_SUPPRESS_BIN_ARRAYS x @p nb floats of @p mem. */
void gf_suppress_bins_bind(struct gf_suppress_bins *b, float *mem, uint32_t nb);

/** Start again: from @p seed (nb mean powers of a noise sample) or, if NULL, from the first frames. */
void gf_suppress_bins_reset(struct gf_suppress_bins *b, const float *seed);

/** One frame: update the state from @p spec (nb interleaved re, im) and scale it by the gain, floored
 * at k->g_min times @p hum[i] in bin i (NULL: at k->g_min in every bin; the hum's bins have a deeper
 * floor: suppress_hum.h), times @p highpass[i] where not NULL (the state never sees that factor). @p hold:
 * the frame holds missing input (NaN/Inf, a muted block, taken as zeros): its gain comes from the state as it
 * is and the state stays as it was, so a gap teaches the noise estimate nothing (zeros would pull
 * its minimum down and lose the suppression for seconds after); the frame count, the minimum's
 * clock, still moves on once a frame has been learned. */
void gf_suppress_bins_run(struct gf_suppress_bins *b, const struct gf_suppress_consts *k,
			  const float *highpass, const float *hum, float *spec, uint32_t nb, int hold);

#endif
