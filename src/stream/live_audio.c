/* The PortAudio callbacks: the only code that runs on the device's audio
 * thread. They copy between the device buffers and the rings, count xruns
 * and wake the worker. No locks, no allocation, no call that can block:
 * everything here is ring index arithmetic, memcpy and relaxed counters. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include "clock.h"
#include "live_internal.h"

static void count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

void gf_live_note_max(_Atomic uint64_t *m, uint64_t v)
{
	/* One writer; the control thread only exchanges it with 0. */
	uint64_t old = atomic_load_explicit(m, memory_order_relaxed);
	while (v > old &&
	       !atomic_compare_exchange_weak_explicit(m, &old, v, memory_order_relaxed, memory_order_relaxed))
		;
}

/* Before the frames are published: a worker that sees them sees this time
 * (or a later callback's). */
static void note_callback_time(struct gf_live *l)
{
	uint64_t t = gf_now_ns();
	uint64_t prev = atomic_load_explicit(&l->cb_ns, memory_order_relaxed);
	if (prev) {
		gf_live_note_max(&l->cb_gap_max_ns, t - prev);
		/* The audio thread's worst stall since the first second (start-up's
		 * own gaps left out): what auto slack keeps room for. One writer. */
		if (atomic_load_explicit(&l->capture_pos, memory_order_relaxed) >= l->rate &&
		    t - prev > atomic_load_explicit(&l->cb_gap_run_ns, memory_order_relaxed))
			atomic_store_explicit(&l->cb_gap_run_ns, t - prev, memory_order_relaxed);
	}
	atomic_store_explicit(&l->cb_ns, t, memory_order_relaxed);
}

uint32_t gf_live_latency_for(uint32_t b, uint32_t n_in, uint32_t n_out, int duplex, uint32_t slack)
{
	/* The worker gets one block period for each block: a block's input is
	 * complete at the end of the callback that brings its last frame, and its
	 * first frame is played by the callback holding position first + latency.
	 * For callbacks aligned with the blocks (one size divides the other) the
	 * tightest such latency is max(n, 2b - n); otherwise 2b + n - 1 covers
	 * any phase. Separate capture and playback streams have unrelated phases:
	 * both periods are added. On top, `slack` playback periods (config
	 * latency_slack, default 1): callbacks do not come exactly on time (a late
	 * audio thread shortens the next period), and without slack every such
	 * hiccup would be an underrun. With device period == block and one period
	 * of slack this is two blocks, as in CamillaDSP (chunk + target level) or
	 * JACK with two periods; jittery systems trade latency for more. */
	uint32_t tight;
	if (!duplex)
		tight = 2 * b + n_in + n_out;
	else if (n_in % b == 0 || b % n_in == 0)
		tight = n_in >= b ? n_in : 2 * b - n_in; /* = max(n, 2b - n) */
	else
		tight = 2 * b + n_in - 1;
	return tight + n_out * slack;
}

static void note_first_capture(struct gf_live *l)
{
	/* Once: which priority does the device give its audio thread? The worker
	 * is put just below it (pthread_getschedparam does not block). */
	int policy;
	struct sched_param sp;
	int prio = 0;
	if (pthread_getschedparam(pthread_self(), &policy, &sp) == 0 &&
	    (policy == SCHED_FIFO || policy == SCHED_RR))
		prio = sp.sched_priority;
	atomic_store_explicit(&l->cb_rt_prio, prio, memory_order_relaxed);
	l->cap.first_done = 1;
}

/* The capture period, published whenever it changes (PipeWire changes its
 * quantum, `jack_bufsize`): playback re-derives the latency from it. */
static void note_period(struct gf_live *l, uint32_t n)
{
	if (n != l->cap.period) {
		l->cap.period = n;
		atomic_store_explicit(&l->cb_frames, n, memory_order_release);
	}
	if (!l->cap.first_done)
		note_first_capture(l);
}

/* Frames dropped because the input ring is full form one gap at one ring
 * position; the worker inserts it back (as time, not data) so the output
 * stays aligned with the capture clock. */
static void gap_grow(struct gf_live *l, uint32_t n)
{
	uint32_t room = (1u << 30) - l->cap.drop_len;
	l->cap.drop_len += n < room ? n : room;
	count(&l->in_overflow, n);
}

/* The callback's time: the clock's, or in tests the time info's (virtual). */
static uint64_t callback_ns(const struct gf_live *l, const PaStreamCallbackTimeInfo *ti)
{
	if (l->ti_clock && ti)
		return (uint64_t)llround(ti->currentTime * 1e9);
	return gf_now_ns();
}

/* Copy the callback's input into the ring's slots (or count it dropped).
 * @return frames staged: the worker sees them only once publish() runs. */
static uint32_t capture(struct gf_live *l, const float *in, uint32_t n, uint64_t t_ns)
{
	struct gf_ring *r = l->in_ring;
	uint32_t staged = 0;
	note_callback_time(l);
	if (l->cap.dropping) {
		/* Resume only when the worker took the previous gap and all of this fits. */
		if (atomic_load_explicit(&l->gap_pending, memory_order_acquire) ||
		    gf_ring_write_space(r) < n) {
			gap_grow(l, n);
			goto done;
		}
		atomic_store_explicit(&l->gap_pos, l->cap.drop_pos, memory_order_relaxed);
		atomic_store_explicit(&l->gap_len, l->cap.drop_len, memory_order_relaxed);
		/* Published before the frames after the gap (the ring's release store
		 * in publish() orders it), so the worker sees the gap before those frames. */
		atomic_store_explicit(&l->gap_pending, 1, memory_order_release);
		l->cap.dropping = 0;
	}
	if (gf_ring_write_space(r) < n) {
		/* Drop whole callbacks, never part of one: the gap is then a multiple
		 * of the period, and blocks keep ending where callbacks end, which
		 * the latency was computed for. */
		l->cap.dropping = 1;
		l->cap.drop_pos = gf_ring_write_index(r);
		l->cap.drop_len = 0;
		gap_grow(l, n);
	} else {
		staged = gf_ring_stage(r, in, n);
	}
done:
	note_period(l, n);
	uint64_t pos_after = atomic_load_explicit(&l->capture_pos, memory_order_relaxed) + n;
	atomic_store_explicit(&l->capture_pos, pos_after, memory_order_release);
	if (l->clock)
		gf_live_clock_capture(l, pos_after, t_ns);
	return staged;
}

/* Hand the staged frames to the worker. In a duplex callback this comes after
 * playback: a worker woken by them (on another CPU, or preempting this thread)
 * then finds the output ring as playback left it, so the margin it notes is
 * the block's real lead, not one period more. */
static void publish(struct gf_live *l, uint32_t staged)
{
	gf_ring_write_advance(l->in_ring, staged);
	/* sem_post never blocks (an atomic increment, and a futex wake only if
	 * the worker sleeps). A wake-up that finds too few frames, or one that
	 * comes while the worker is busy, is harmless: the worker re-checks the
	 * ring before every wait and waits with a timeout. */
	sem_post(&l->wake);
}

/* Join the stream, or rejoin it after a period (or slack) change: the frame
 * captured at position p is played at p + latency, so the read position
 * becomes (capture position - latency). Moving it forward drops frames;
 * moving it back would replay slots already played, so the difference is
 * played as silence instead (play.hold). Either is the one short glitch of a
 * period change; after it the delay is constant again. */
static void sync_playback(struct gf_live *l, uint32_t n_in, uint32_t n_out, uint64_t pos)
{
	uint32_t slack = atomic_load_explicit(&l->slack_now, memory_order_relaxed);
	uint32_t lat = gf_live_latency_for(l->block, n_in, n_out, l->duplex, slack);
	uint32_t cap = gf_ring_capacity(l->out_ring);
	if (lat > cap / 2)
		lat = cap / 2;
	uint32_t target = (uint32_t)pos - lat;
	if (!l->play.synced) {
		gf_ring_read_seek(l->out_ring, target);
	} else {
		/* Where playback stands now: the read index less the silence still owed. */
		uint32_t at = gf_ring_read_index(l->out_ring) - l->play.hold;
		int32_t move = (int32_t)(target - at);
		l->play.hold = 0;
		if (move > 0)
			gf_ring_read_advance(l->out_ring, (uint32_t)move);
		else
			l->play.hold = (uint32_t)-move;
		count(&l->resyncs, 1);
	}
	gf_live_clock_resync(l);
	l->play.n_in = n_in;
	l->play.n_out = n_out;
	l->play.slack = slack;
	atomic_store_explicit(&l->latency, lat, memory_order_relaxed);
	atomic_store_explicit(&l->latency_known, 1, memory_order_release);
	l->play.synced = 1;
}

/* Copy what the output ring holds at the read position, silence for what it
 * does not (an underrun). @return frames missing. */
static uint32_t play_ring(struct gf_live *l, float *out, uint32_t n)
{
	size_t fb = (size_t)l->out_channels * sizeof(float);
	struct gf_ring_vec v[2];
	uint32_t avail = gf_ring_read_vector(l->out_ring, v);
	uint32_t k = avail < n ? avail : n;
	uint32_t k0 = k < v[0].frames ? k : v[0].frames;
	memcpy(out, v[0].data, k0 * fb);
	memcpy((char *)out + k0 * fb, v[1].data, (k - k0) * fb);
	if (k < n) {
		/* Underrun: silence now, and the position moves on regardless, so
		 * the frames arriving late are dropped by the worker (it sees the
		 * lag) and everything after keeps the same latency. */
		memset((char *)out + k * fb, 0, (n - k) * fb);
		count(&l->out_underflow, n - k);
	}
	gf_ring_read_advance(l->out_ring, n);
	return n - k;
}

static void playback(struct gf_live *l, float *out, uint32_t n, uint64_t pos, uint64_t t_ns)
{
	size_t fb = (size_t)l->out_channels * sizeof(float);
	uint32_t n_in = atomic_load_explicit(&l->cb_frames, memory_order_acquire);
	if (n_in == 0) { /* separate streams: capture has not started yet */
		memset(out, 0, n * fb);
		return;
	}
	gf_live_slack_check(l, n);
	if (!l->play.synced || n_in != l->play.n_in || n != l->play.n_out ||
	    atomic_load_explicit(&l->slack_now, memory_order_relaxed) != l->play.slack)
		sync_playback(l, n_in, n, pos);
	uint32_t quiet = l->play.hold < n ? l->play.hold : n;
	memset(out, 0, quiet * fb);
	l->play.hold -= quiet;
	float *o = out + (size_t)quiet * l->out_channels;
	uint32_t missing = quiet == n ? 0
			   : l->clock ? gf_live_clock_play(l, o, n - quiet, t_ns)
				      : play_ring(l, o, n - quiet);
	if (missing)
		gf_live_slack_underrun(l, missing);
}

static void count_flags(struct gf_live *l, PaStreamCallbackFlags flags)
{
	if (flags & (paInputUnderflow | paInputOverflow | paOutputUnderflow | paOutputOverflow))
		count(&l->dev_xruns, 1);
}

int gf_live_duplex_cb(const void *in, void *out, unsigned long frames, const PaStreamCallbackTimeInfo *ti,
		      PaStreamCallbackFlags flags, void *ud)
{
	struct gf_live *l = ud;
	count_flags(l, flags);
	uint64_t pos = atomic_load_explicit(&l->capture_pos, memory_order_relaxed);
	uint64_t t = callback_ns(l, ti);
	uint32_t staged = capture(l, in, (uint32_t)frames, t);
	playback(l, out, (uint32_t)frames, pos, t);
	publish(l, staged);
	return paContinue;
}

int gf_live_capture_cb(const void *in, void *out, unsigned long frames, const PaStreamCallbackTimeInfo *ti,
		       PaStreamCallbackFlags flags, void *ud)
{
	(void)out;
	struct gf_live *l = ud;
	count_flags(l, flags);
	publish(l, capture(l, in, (uint32_t)frames, callback_ns(l, ti)));
	return paContinue;
}

int gf_live_playback_cb(const void *in, void *out, unsigned long frames, const PaStreamCallbackTimeInfo *ti,
			PaStreamCallbackFlags flags, void *ud)
{
	(void)in;
	struct gf_live *l = ud;
	count_flags(l, flags);
	playback(l, out, (uint32_t)frames, atomic_load_explicit(&l->capture_pos, memory_order_acquire),
		 callback_ns(l, ti));
	return paContinue;
}

void gf_live_finished_cb(void *ud)
{
	struct gf_live *l = ud;
	atomic_store(&l->finished, 1);
}
