/* Rate matching between a capture and a playback stream that do not share a
 * clock (two devices: a USB microphone and a separate DAC, two ALSA cards).
 *
 * The worker's output stays in the capture clock's frames (the output ring's
 * indices are capture positions). The playback callback reads it through
 * libsamplerate at a ratio that the delay-locked loop of live_dll.c sets
 * once per callback, as alsa_in, zita-ajbridge and PipeWire's adaptive
 * resampler do:
 * - the delay: capture position now (the latest capture callback's position
 *   extrapolated to this callback's time at the nominal rate) minus the
 *   capture position being played. The latter is the resampler's input
 *   position, counted here (each output frame advances it by the ratio,
 *   which is set as a step at the start of each callback, so the count is
 *   exact), not the ring's read index: libsamplerate takes input in chunks
 *   into its own buffer, so the read index runs ahead by a sawtooth;
 * - its error against the target (the latency the stream was synced at)
 *   drives the loop (live_dll.h: equations, bandwidth, why it is stable);
 * - what the loop must not correct by changing the pitch is corrected in one
 *   step instead, counted: after an underrun, the position moves on by the
 *   frames that were played as silence (as the one-clock path does), so the
 *   delay is what it was; a delay error beyond RECENTRE_S that lasts
 *   RECENTRE_HOLD_S and RECENTRE_CALLS callbacks (a stretch lost by either
 *   device, an overrun) is skipped or filled with silence at once; errors
 *   that large never reach the loop (a callback that comes late reads as
 *   one for a callback or two).
 * Cost on the audio path, per callback of n frames: ceil(n / CLOCK_CHUNK)
 * src_process() calls of at most CLOCK_CHUNK output frames each (two more
 * when the ring runs dry), the input copied into a buffer allocated at new,
 * two exp() for the loop, and on an underrun or a re-centring one
 * src_reset(). No allocation, lock, system call or logging. */
#include <math.h>
#include <samplerate.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "live_dll.h"
#include "live_internal.h"

#define CLOCK_CHUNK 1024u   /* output frames per src_process call */
#define RECENTRE_S 5e-3	    /* a delay error beyond this is not the loop's to correct ... */
#define RECENTRE_HOLD_S 0.1 /* ... and once it has lasted this long ... */
#define RECENTRE_CALLS 2    /* ... and this many callbacks, it is re-centred */

struct gf_live_clock {
	SRC_STATE *src;
	float *in; /* contiguous input for one src_process call */
	uint32_t in_max, channels, rate;
	struct gf_dll dll;
	double c;	    /* the ratio in force: capture frames per playback frame */
	double pos;	    /* capture position being played (resampler input), frames */
	double off_s;	    /* how long the delay error has been beyond RECENTRE_S, seconds ... */
	uint32_t off_calls; /* ... and callbacks */
	uint32_t hold;	    /* output frames of silence owed (a delay that was too short) */
	int need_init;	    /* pos from the read index at the next call (start, resync) */
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
	k->c = 1.0;
	gf_dll_init(&k->dll);
	k->need_init = 1;
	k->in_max = (uint32_t)(CLOCK_CHUNK * (1.0 + 2 * GF_DLL_MAX_DEV)) + 64;
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

/* Resample into @p out (@p n frames) at the ratio in force. @return frames
 * that came out short (the ring ran dry). */
static uint32_t resample(struct gf_live *l, struct gf_live_clock *k, float *out, uint32_t n)
{
	/* Offer only what this output needs (and a little): the resampler
	 * buffers whatever it is given. A step, not a ramp, to the new ratio:
	 * each output frame then advances the input position by exactly c. */
	size_t fb = (size_t)k->channels * sizeof(float);
	uint32_t done = 0;
	src_set_ratio(k->src, 1.0 / k->c);
	while (done < n) {
		uint32_t want = n - done < CLOCK_CHUNK ? n - done : CLOCK_CHUNK;
		struct gf_ring_vec v[2];
		uint32_t avail = gf_ring_read_vector(l->out_ring, v);
		uint32_t need = (uint32_t)(want * k->c) + 64; /* + the filter's look-ahead */
		need = need < k->in_max ? need : k->in_max;
		uint32_t take = avail < need ? avail : need;
		uint32_t t0 = take < v[0].frames ? take : v[0].frames;
		memcpy(k->in, v[0].data, t0 * fb);
		memcpy((char *)k->in + t0 * fb, v[1].data, (take - t0) * fb);
		SRC_DATA d = {.data_in = k->in,
			      .data_out = out + (size_t)done * k->channels,
			      .input_frames = take,
			      .output_frames = want,
			      .src_ratio = 1.0 / k->c};
		if (src_process(k->src, &d) != 0 || d.output_frames_gen == 0)
			break;
		gf_ring_read_advance(l->out_ring, (uint32_t)d.input_frames_used);
		done += (uint32_t)d.output_frames_gen;
		k->pos += d.output_frames_gen * k->c;
	}
	if (done < n)
		memset(out + (size_t)done * k->channels, 0, (n - done) * fb);
	return n - done;
}

/* Play from capture position @p to on (rounded to a frame): the ring's read
 * index moves there and the resampler starts afresh (its buffered input
 * belongs to the old position). Moving back re-exposes slots the resampler
 * had taken but not played, which still hold those frames; never further
 * back than the ring holds. */
static void seek(struct gf_live *l, struct gf_live_clock *k, double to)
{
	struct gf_ring *r = l->out_ring;
	int64_t want = llround(to);
	uint32_t now = gf_ring_read_index(r), idx = (uint32_t)want;
	int32_t back = (int32_t)(now - idx);
	uint32_t room = gf_ring_capacity(r) - gf_ring_read_space(r);
	if (back > 0 && (uint32_t)back > room)
		idx = now - room;
	gf_ring_read_seek(r, idx);
	src_reset(k->src);
	k->pos = (double)(want + (int32_t)(idx - (uint32_t)want));
}

/* Join the stream at the read index (start, or the callback moved it: a
 * resync). The clocks are what they were: the loop keeps its ratio. */
static void join(struct gf_live *l, struct gf_live_clock *k, double cap)
{
	double whole = floor(cap);
	int32_t lag = (int32_t)((uint32_t)(uint64_t)whole - gf_ring_read_index(l->out_ring));
	seek(l, k, whole - lag);
	gf_dll_rejoin(&k->dll);
	k->hold = 0;
	k->off_s = 0;
	k->off_calls = 0;
	k->need_init = 0;
}

/* The delay is @p e frames off and has been for a while: not drift, which
 * the loop corrects inaudibly, but a step (an overrun, a stretch of playback
 * lost): skip the frames, or play silence until the delay is back. */
static void recentre(struct gf_live *l, struct gf_live_clock *k, double e)
{
	double most = gf_ring_capacity(l->out_ring); /* bounded silence, a skip the ring can tell */
	e = e > most ? most : e < -most ? -most : e;
	if (e > 0) {
		seek(l, k, k->pos + e);
		atomic_fetch_add_explicit(&l->clock_skipped, (uint64_t)llround(e), memory_order_relaxed);
	} else {
		k->hold = (uint32_t)llround(-e / k->c);
		atomic_fetch_add_explicit(&l->clock_inserted, (uint64_t)llround(-e), memory_order_relaxed);
	}
	k->off_s = 0; /* the loop never saw this error: nothing to undo there */
	k->off_calls = 0;
}

/* The loop's part of a callback of @p n frames: the ratio for them, unless
 * the error is one the loop must not see (above). */
static void steer(struct gf_live *l, struct gf_live_clock *k, double e, uint32_t n)
{
	if (k->hold)
		return; /* the delay is being restored: the error is not the clocks' */
	if (fabs(e) <= RECENTRE_S * k->rate) {
		k->off_s = 0;
		k->off_calls = 0;
		k->c = gf_dll_update(&k->dll, e, n, k->rate);
		return;
	}
	/* A late callback reads as a large error for its own duration; a real
	 * step stays. */
	k->off_s += (double)n / k->rate;
	if (++k->off_calls >= RECENTRE_CALLS && k->off_s >= RECENTRE_HOLD_S)
		recentre(l, k, e);
}

/* Silence owed by a re-centring, before anything is resampled. @return frames played. */
static uint32_t play_hold(struct gf_live_clock *k, float *out, uint32_t n)
{
	uint32_t q = k->hold < n ? k->hold : n;
	memset(out, 0, (size_t)q * k->channels * sizeof(float));
	k->hold -= q;
	return q;
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
	if (cap >= 0.0) {
		if (k->need_init)
			join(l, k, cap);
		double target = (double)atomic_load_explicit(&l->latency, memory_order_relaxed);
		double e = cap - k->pos - target;
		steer(l, k, e, n);
		atomic_store_explicit(&l->delay_err_milli, (int32_t)lrint(fmax(fmin(e, 2e6), -2e6) * 1000.0),
				      memory_order_relaxed);
	}
	uint32_t q = play_hold(k, out, n);
	uint32_t missing = q < n ? resample(l, k, out + (size_t)q * k->channels, n - q) : 0;
	if (missing) {
		/* Underrun: the silence stood for frames the clock has moved past.
		 * Move past them too (the worker drops them when they come), so the
		 * delay stays as it was instead of growing by the gap. */
		seek(l, k, k->pos + missing * k->c);
		atomic_fetch_add_explicit(&l->out_underflow, missing, memory_order_relaxed);
	}
	atomic_store_explicit(&l->ratio_ppb, (int64_t)llrint((1.0 / k->dll.ratio - 1.0) * 1e9),
			      memory_order_relaxed);
	return missing;
}
