/**
 * @file suppress.h
 * A time-varying noise suppressor: design = "suppress".
 *
 * Short-time Fourier transform, per channel: frames of N points (the longest
 * even length with no prime factor above 7 within 24 ms: 384 at 16 kHz, 1152
 * at 48 kHz), hop N/2, a square-root periodic Hann window
 * before the transform and after the inverse (their product sums to one at
 * half overlap, so a gain of one gives the input back, delayed).
 * Per frame and bin, with P = |X|^2 and time constants in seconds (so the
 * behaviour does not depend on the rate or the hop):
 *
 *   S    = a_s S + (1 - a_s) P'                       smoothed power (P' over 3 bins)
 *   Smin = min of S over the last 0.8 to 1.6 s         running minimum
 *   Slong = min of S over the last 1.6 to 2.4 s        the longer minimum
 *   p    = a_p p + (1 - a_p) max(ramp(S / Smin), steady(S / Slong) ramp(P / L),
 *                                   ramp(S / Slong))
 *                                                      speech presence
 *   a    = a_d + (1 - a_d) p;   L = a L + (1 - a) P   noise estimate,
 *                                 kept within 0.1 Slong .. 5 Smin
 *   xi   = a_dd |Y_prev|^2 / L + (1 - a_dd) max(P / L - 1, 0)
 *   G    = max(xi / (1 + xi), g_min)                  Wiener gain, floored
 *   Y    = H G X                                       H: the high-pass table, or 1
 *
 * (minimum-controlled recursive averaging for the noise, the decision-
 * directed a priori SNR for the gain). The longer minimum keeps clean speech
 * transparent: a voice that talks on for longer than Smin's window has its
 * own quietest bins there, which the first ramp and a floor tied to Smin
 * would take for noise; its pauses (in Slong) lie 15 dB and more below it, a
 * steady noise's swings do not (ramp(S / Slong) starts at 15 dB, is certain at
 * 20). In the bins of a mains hum the suppressor is told of (hum_harmonics,
 * gf_suppress_set_hum), g_min is lower and L at least Smin: the hum is
 * removed there in the frames, with no phase and no latency (suppress_hum.h).
 * The noise estimate starts from a noise
 * sample when one is given and adapts from there; without one it starts
 * from the first frames. The P / L term counts only where S stands above
 * the longer minimum (steady(): a ramp from 1.5 to 3 times it): a sound
 * that has sat at its minimum for the longer window is steady. Without that,
 * an L left far under a steady sound that never dips (a tone, a fan's
 * whine), after digital silence (a live capture before its device delivers,
 * a mute of half a second) or a quieter noise, would stay there for good:
 * P / L reads as speech, L keeps to its floor under the longer minimum, and
 * the sound is cut by some 2 dB, not by the depth. Such a sound, far above
 * the longer minimum, reads as speech until that minimum has seen it (2.4 s
 * at most): the price of clean speech after digital silence staying clean.
 * g_min = 10^(-reduction_db / 20).
 *
 * Live controls: the floor g_min is the suppressor's one real-time
 * parameter (gf_suppress_set_floor): a new depth, or bypass (g_min = 1, so
 * G = 1 and the output is the input delayed, times H), is reached in equal
 * linear steps, one a frame, over GF_SUPPRESS_RAMP_S (30 ms: three hops at
 * any rate), and the overlap-add spreads each step over a hop: no click. The
 * state and the noise estimate never see the floor, so a return from bypass
 * suppresses at once, with the estimate kept up to date meanwhile.
 *
 * H, with highpass_hz set, is a fixed zero-phase high-pass: a real gain per
 * bin, applied with G in the same frames, so it adds no latency and turns no
 * phase (a minimum-phase FIR high-pass turns the phase of a voice's lowest
 * harmonics). H is 0 at DC and a ramp one bin wide centred on highpass_hz
 * (1 above it): the windows smear each bin over about +-1.5 bins, so the
 * response is that ramp smoothed, -6 dB within a few hertz of highpass_hz.
 * The bins are about 42 Hz apart at every rate, so a lower cutoff than half
 * of that is not possible (DC's bin is always cut), and content under the
 * first bin (a 10 Hz rumble) leaks into bins 0 to 2: at 25 Hz the table cuts
 * 10 Hz by 12 dB, 5 Hz by 14 dB, and passes 80 Hz within 0.2 dB. The noise
 * estimate and the recursions see the spectrum before H: they are the same
 * with or without it, and steady rumble is cut by g_min on top.
 *
 * A NaN or Inf input sample is missing input: it counts as zero, and the
 * two frames that hold it (hop before and after) take their gain from the
 * state as it is and leave the state, the noise estimate above all, as it
 * was, on every channel of this suppressor (they move in lockstep, as the
 * GPU's batch does; the engine mutes a block on all channels anyway). A caller marks a muted block
 * (gf_suppress_bank_gap_by) the same way. The output there is what the gain makes of the zeros; from the next
 * frame on, it is what it would have been had the gap been the noise.
 *
 * The output lags the input by gf_suppress_latency() frames (N): offline
 * drops that many from the start and flushes them at the end.
 *
 * Threads: new/free/reset on the control thread (they allocate and plan
 * FFTW); process() on the audio thread: no allocation, lock, I/O or wait;
 * its cost is bounded by ceil(frames / hop) + 1 transform pairs per channel.
 */
#ifndef GPUFIR_SUPPRESS_H
#define GPUFIR_SUPPRESS_H

#include <stdint.h>

#include "error.h"

#define GF_SUPPRESS_DEFAULT_REDUCTION_DB 15.0
#define GF_SUPPRESS_MAX_REDUCTION_DB 40.0
/** The longest frame, in seconds: the added latency is at most this. */
#define GF_SUPPRESS_MAX_FRAME_S 0.024
/** highpass_hz: 0 (off) or within these. Below half the ~42 Hz bin spacing no table is lower. */
#define GF_SUPPRESS_MIN_HIGHPASS_HZ 20.0
#define GF_SUPPRESS_MAX_HIGHPASS_HZ 1000.0

struct gf_suppress_hum; /* suppress_hum.h (C11 atomics: C only, never the CUDA module's C++) */

struct gf_suppress_params {
	double reduction_db; /**< most a bin is attenuated, dB, 0..GF_SUPPRESS_MAX_REDUCTION_DB */
	const float *noise;  /**< optional mono noise sample seeding the estimate; NULL: adapt */
	uint64_t noise_frames;
	double highpass_hz;	/**< the zero-phase high-pass's -6 dB point (above); 0: off */
	uint32_t hum_harmonics; /**< mains hum removed up to this harmonic (suppress_hum.h); 0: none */
	const struct gf_suppress_hum *hum; /**< the hum to remove from the start; NULL: none yet */
};

struct gf_suppress;

/** Control thread. @return 0, GF_E_INVAL (bad parameters, message in @p eb) or GF_E_NOMEM. */
int gf_suppress_new(const struct gf_suppress_params *p, uint32_t channels, uint32_t rate,
		    struct gf_suppress **out, struct gf_errbuf *eb);

/** Accepts NULL. Control thread. */
void gf_suppress_free(struct gf_suppress *s);

/** Frames the output lags the input (the frame length N). */
uint32_t gf_suppress_latency(const struct gf_suppress *s);

/**
 * Suppress noise in @p buf (@p frames interleaved frames of the channels
 * given to new()), in place; the output is the input of latency() frames
 * earlier, suppressed. Audio thread, RT-safe.
 */
void gf_suppress_process(struct gf_suppress *s, float *buf, uint32_t frames);

/** The floor (gain, linear) of a depth in dB, or 1 where @p bypass. Any thread. */
float gf_suppress_floor_gain(double depth_db, int bypass);

/**
 * Ramp the gain's floor to @p g (gf_suppress_floor_gain; 0 < g <= 1) from the next frame on, over
 * GF_SUPPRESS_RAMP_S. The thread that runs process() (or any while none does). RT-safe. The hum's
 * bins keep their factor below it (gf_suppress_set_hum), bypassed or not.
 */
void gf_suppress_set_floor(struct gf_suppress *s, float g);

/**
 * Remove @p h's harmonics up to the params' hum_harmonics from the next frame on (NULL or f0_hz 0:
 * none), as a zero-phase gain in the frames (suppress_hum.h): the floor times a factor below 1 in
 * the hum's bins. Control thread, also while process() runs on the audio thread: the table is
 * handed over without a lock (gf_suppress_gain_slot); one caller at a time.
 */
void gf_suppress_set_hum(struct gf_suppress *s, const struct gf_suppress_hum *h);

/** Back to the state new() made (the noise sample's estimate, empty buffers), the floor at the
 * target last set (no ramp). Control thread, audio stopped. */
void gf_suppress_reset(struct gf_suppress *s);

#endif
