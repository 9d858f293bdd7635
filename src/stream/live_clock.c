/* Rate matching between a capture and a playback stream that do not share a
 * clock (two devices: a USB microphone and a separate DAC, two ALSA cards).
 *
 * The worker's output stays in the capture clock's frames (the output ring's
 * indices are capture positions). The playback callback reads it through
 * libsamplerate at a ratio (playback frames per capture frame) that a
 * delay-locked loop adjusts, as alsa_in, zita-ajbridge and PipeWire's
 * adaptive resampler do:
 * - the delay: capture position now (the latest capture callback's position
 *   extrapolated to this callback's time at the nominal rate) minus the
 *   capture position being played, in frames. The latter is the resampler's
 *   input position, counted here (each output frame advances it by the
 *   ratio's inverse, ramped as libsamplerate ramps a changed ratio across a
 *   call), not the ring's read index: libsamplerate takes input in chunks
 *   into its own buffer, so the read index runs ahead by a sawtooth;
 * - its error against the target (the latency the stream was synced at),
 *   low-passed, drives a PI loop whose integrator converges on the clocks'
 *   true ratio; the proportional term pulls the delay back. Time constants:
 *   0.1 s while the error is large (locking on, up to 5 % off), 2 s once it
 *   stays within a few frames.
 * Cost on the audio path: one src_process() per callback on at most
 * CLOCK_CHUNK frames (bigger periods are cut), input copied into a buffer
 * allocated at new. No allocation, lock or system call. */
#include <math.h>
#include <samplerate.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "live_internal.h"

#define CLOCK_CHUNK 1024u /* output frames per src_process call */
#define MAX_DEV 0.05	  /* the ratio stays within 5 % of nominal */
#define LOCK_FRAMES 8.0	  /* |error| under this for LOCK_CALLS callbacks: narrow the loop */
#define LOCK_CALLS 200u
#define TAU_FAST_S 0.1
#define TAU_SLOW_S 2.0

struct gf_live_clock {
	SRC_STATE *src;
	float *in; /* contiguous input for one src_process call */
	uint32_t in_max, channels, rate;
	double c_int;  /* integrator: capture frames per playback frame */
	double c_last; /* the rate of the previous call (the resampler ramps from it) */
	double pos;    /* capture position being played (resampler input), frames */
	int need_init; /* pos from the read index at the next call (start, resync) */
	double err_lp; /* low-passed delay error, frames */
	uint32_t calm; /* callbacks in a row with a small error */
	int locked, started;
};

int gf_live_clock_new(struct gf_live_clock **out, uint32_t channels, uint32_t rate)
{
	struct gf_live_clock *k = calloc(1, sizeof(*k));
	int err = 0;
	*out = NULL;
	if (!k)
		return GF_E_NOMEM;
	k->channels = channels;
	k->rate = rate;
	k->c_int = k->c_last = 1.0;
	k->need_init = 1;
	k->in_max = (uint32_t)(CLOCK_CHUNK * (1.0 + 2 * MAX_DEV)) + 64;
	k->in = calloc((size_t)k->in_max * channels, sizeof(float));
	k->src = src_new(SRC_SINC_FASTEST, (int)channels, &err);
	if (!k->in || !k->src) {
		gf_live_clock_free(k);
		return GF_E_NOMEM;
	}
	*out = k;
	return 0;
}

void gf_live_clock_free(struct gf_live_clock *k)
{
	if (!k)
		return;
	if (k->src)
		src_delete(k->src);
	free(k->in);
	free(k);
}

/* Capture callback: publish (position, time) as one pair (a sequence lock:
 * the playback callback retries a torn read, never waits). */
void gf_live_clock_capture(struct gf_live *l, uint64_t pos_after, uint64_t t_ns)
{
	uint32_t s = atomic_load_explicit(&l->cap_seq, memory_order_relaxed);
	atomic_store_explicit(&l->cap_seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&l->cap_stamp_pos, pos_after, memory_order_relaxed);
	atomic_store_explicit(&l->cap_stamp_ns, t_ns, memory_order_relaxed);
	atomic_store_explicit(&l->cap_seq, s + 2, memory_order_release);
}

/* The capture position at time @p t_ns, or -1 if none published yet. */
static double capture_pos_at(struct gf_live *l, uint64_t t_ns)
{
	for (int i = 0; i < 4; i++) {
		uint32_t s0 = atomic_load_explicit(&l->cap_seq, memory_order_acquire);
		uint64_t p = atomic_load_explicit(&l->cap_stamp_pos, memory_order_relaxed);
		uint64_t t = atomic_load_explicit(&l->cap_stamp_ns, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		if (s0 & 1 || atomic_load_explicit(&l->cap_seq, memory_order_relaxed) != s0)
			continue;
		if (!s0)
			return -1.0;
		return (double)p + ((double)t_ns - (double)t) * 1e-9 * l->rate;
	}
	return -1.0;
}

/* The loop: new capture frames per playback frame from the delay error. */
static double loop_step(struct gf_live_clock *k, double err, uint32_t n)
{
	if (!k->started) {
		k->err_lp = err;
		k->started = 1;
	}
	k->err_lp += 0.3 * (err - k->err_lp); /* wake-up jitter */
	k->calm = fabs(k->err_lp) < LOCK_FRAMES ? k->calm + 1 : 0;
	if (!k->locked && k->calm >= LOCK_CALLS)
		k->locked = 1;
	else if (k->locked && fabs(k->err_lp) > 8 * LOCK_FRAMES)
		k->locked = 0; /* lost it: lock on again fast */
	/* Critically damped second-order loop, pole at 1 - a per callback. */
	double a = (double)n / (k->rate * (k->locked ? TAU_SLOW_S : TAU_FAST_S));
	k->c_int += a * a * k->err_lp / n;
	if (k->c_int < 1.0 - MAX_DEV)
		k->c_int = 1.0 - MAX_DEV;
	if (k->c_int > 1.0 + MAX_DEV)
		k->c_int = 1.0 + MAX_DEV;
	double c = k->c_int + 2 * a * k->err_lp / n;
	return c < 1.0 - 2 * MAX_DEV ? 1.0 - 2 * MAX_DEV : c > 1.0 + 2 * MAX_DEV ? 1.0 + 2 * MAX_DEV : c;
}

/* Resample into @p out (@p n frames). @return frames that came out short. */
static uint32_t resample(struct gf_live *l, struct gf_live_clock *k, float *out, uint32_t n, double ratio)
{
	/* Offer only what this output needs (and a little): the resampler
	 * buffers whatever it is given, and input it holds would read as
	 * played to the loop (the read index is its measure). */
	size_t fb = (size_t)k->channels * sizeof(float);
	uint32_t done = 0;
	while (done < n) {
		uint32_t want = n - done < CLOCK_CHUNK ? n - done : CLOCK_CHUNK;
		struct gf_ring_vec v[2];
		uint32_t avail = gf_ring_read_vector(l->out_ring, v);
		uint32_t need = (uint32_t)(want / ratio) + 64; /* + the filter's look-ahead */
		need = need < k->in_max ? need : k->in_max;
		uint32_t take = avail < need ? avail : need;
		uint32_t t0 = take < v[0].frames ? take : v[0].frames;
		memcpy(k->in, v[0].data, t0 * fb);
		memcpy((char *)k->in + t0 * fb, v[1].data, (take - t0) * fb);
		SRC_DATA d = {.data_in = k->in,
			      .data_out = out + (size_t)done * k->channels,
			      .input_frames = take,
			      .output_frames = want,
			      .src_ratio = ratio};
		if (src_process(k->src, &d) != 0 || d.output_frames_gen == 0)
			break;
		gf_ring_read_advance(l->out_ring, (uint32_t)d.input_frames_used);
		done += (uint32_t)d.output_frames_gen;
		k->pos += d.output_frames_gen * 0.5 * (k->c_last + 1.0 / ratio);
		k->c_last = 1.0 / ratio;
	}
	if (done < n)
		memset(out + (size_t)done * k->channels, 0, (n - done) * fb);
	return n - done;
}

void gf_live_clock_resync(struct gf_live *l)
{
	if (l->clock)
		l->clock->need_init = 1;
}

uint32_t gf_live_clock_play(struct gf_live *l, float *out, uint32_t n, uint64_t t_ns)
{
	struct gf_live_clock *k = l->clock;
	double cap = capture_pos_at(l, t_ns);
	double c = k->c_int;
	if (cap >= 0.0) {
		if (k->need_init) {
			/* Played position = the read index, as a 64-bit capture position. */
			double whole = floor(cap);
			int32_t lag = (int32_t)((uint32_t)(uint64_t)whole - gf_ring_read_index(l->out_ring));
			k->pos = whole - lag;
			k->need_init = 0;
		}
		double target = (double)atomic_load_explicit(&l->latency, memory_order_relaxed);
		double err = cap - k->pos - target;
		c = loop_step(k, err, n);
		atomic_store_explicit(&l->delay_err_milli, (int32_t)lrint(err * 1000.0),
				      memory_order_relaxed);
	}
	uint32_t missing = resample(l, k, out, n, 1.0 / c);
	atomic_store_explicit(&l->ratio_ppb, (int64_t)llrint((1.0 / k->c_int - 1.0) * 1e9),
			      memory_order_relaxed);
	if (missing)
		atomic_fetch_add_explicit(&l->out_underflow, missing, memory_order_relaxed);
	return missing;
}
