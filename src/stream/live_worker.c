/* The live worker thread: waits for a block of input, runs the chain on it
 * (engine, suppressor, gain: gf_chain_process), measures the time it took,
 * and sends the output to playback and recording. Per block it makes no
 * allocation, takes no lock and does no I/O; it blocks only in its own wait
 * for input. Two system calls a block (four if it was late) say whether a
 * late block was the host's (thread_use.h). */
#define _GNU_SOURCE /* sem_clockwait */
#include <string.h>
#include <time.h>

#include "chain_run.h"
#include "clock.h"
#include "deadline.h"
#include "live_internal.h"
#include "thread_use.h"

#define WAIT_NS 100000000L /* re-check the state at least every 100 ms */

static void count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static void wait_input(struct gf_live *l)
{
	struct timespec ts = gf_deadline_in(CLOCK_MONOTONIC, WAIT_NS);
	sem_clockwait(&l->wake, CLOCK_MONOTONIC, &ts);
}

/* Playback: frames at the output ring's write position; positions the
 * playback callback has already passed (played as silence) are dropped. */
static void emit_playback(struct gf_live *l, const float *x, uint32_t n)
{
	struct gf_ring *r = l->out_ring;
	uint32_t skip = gf_ring_write_lag(r);
	if (skip > n)
		skip = n;
	if (skip)
		gf_ring_write_advance(r, skip);
	uint32_t rest = n - skip;
	uint32_t k =
		x ? gf_ring_write(r, x + (size_t)skip * l->out_channels, rest) : gf_ring_write_zeros(r, rest);
	if (k < rest)
		count(&l->out_overflow, rest - k);
}

static void emit_record(struct gf_live *l, const float *x, uint32_t n)
{
	struct gf_ring *r = l->rec_ring;
	uint32_t k = x ? gf_ring_write(r, x, n) : gf_ring_write_zeros(r, n);
	if (k < n)
		count(&l->rec_dropped, n - k);
	if (gf_ring_write_space(r) < gf_ring_capacity(r) / 2)
		gf_recorder_kick(l->rec);
}

/* @p x == NULL: @p n frames of silence (an input gap). */
static void emit(struct gf_live *l, const float *x, uint32_t n)
{
	if (n == 0)
		return;
	if (l->out_ring)
		emit_playback(l, x, n);
	if (l->rec && gf_recorder_active(l->rec))
		emit_record(l, x, n);
}

/* Offset of a pending input gap within the next @p frames input frames, or
 * @p frames if none falls there. */
static uint32_t gap_offset(struct gf_live *l, uint32_t frames, uint32_t *len)
{
	*len = 0;
	if (!atomic_load_explicit(&l->gap_pending, memory_order_acquire))
		return frames;
	uint32_t off =
		atomic_load_explicit(&l->gap_pos, memory_order_relaxed) - gf_ring_read_index(l->in_ring);
	if (off >= frames)
		return frames;
	*len = atomic_load_explicit(&l->gap_len, memory_order_relaxed);
	return off;
}

static void note_min(_Atomic int32_t *m, int32_t v)
{
	int32_t old = atomic_load_explicit(m, memory_order_relaxed);
	while (v < old &&
	       !atomic_compare_exchange_weak_explicit(m, &old, v, memory_order_relaxed, memory_order_relaxed))
		;
}

/* How early the block is: frames still queued for playback ahead of it, or
 * minus the frames playback already passed. Before playback has joined the
 * stream there is nothing to measure. */
static void note_margin(struct gf_live *l)
{
	struct gf_ring *r = l->out_ring;
	if (!r || !atomic_load_explicit(&l->latency_known, memory_order_acquire))
		return;
	uint32_t lag = gf_ring_write_lag(r);
	int32_t m = lag ? -(int32_t)lag : (int32_t)(gf_ring_capacity(r) - gf_ring_write_space(r));
	note_min(&l->margin_min, m);
}

/* A late block, inside a swap's window or not, the host's (thread_use.h) or not. */
static void count_late(struct gf_live *l, int in_swap, int host)
{
	count(&l->late, 1);
	if (host)
		count(&l->late_host, 1);
	if (in_swap)
		count(&l->late_swap, 1);
	if (in_swap && host)
		count(&l->late_swap_host, 1);
}

/* Filter the next @p frames frames of input (available in the ring). */
static void do_block(struct gf_live *l, uint32_t frames)
{
	struct gf_ring_vec v[2];
	gf_ring_read_vector(l->in_ring, v);
	const float *src = v[0].data; /* zero copy while the block is contiguous */
	if (v[0].frames < frames) {
		size_t fb = (size_t)l->channels * sizeof(float);
		memcpy(l->blk_in, v[0].data, v[0].frames * fb);
		memcpy((char *)l->blk_in + v[0].frames * fb, v[1].data, (frames - v[0].frames) * fb);
		src = l->blk_in;
	}
	uint32_t gap_len;
	uint32_t split = gap_offset(l, frames, &gap_len);

	struct gf_thread_use u0 = gf_thread_use_now(); /* outside the timed span */
	/* The callback time first: a callback running on another CPU can store
	 * a time later than a clock read taken before this load. The t0 > cb
	 * test stays for what the C memory model does not promise: a relaxed
	 * load is not ordered before the clock read on every CPU. */
	uint64_t cb = atomic_load_explicit(&l->cb_ns, memory_order_relaxed);
	uint64_t t0 = gf_now_ns();
	/* Since the latest capture callback: the block's wait when the worker
	 * keeps up (a lower bound when it is a whole callback behind). Not once
	 * the capture stopped: the drain is not late. */
	if (t0 > cb && atomic_load_explicit(&l->wstate, memory_order_relaxed) == GF_W_RUN)
		gf_live_note_max(&l->wake_max_ns, t0 - cb);
	int in_swap = gf_engine_swap_window(l->engine);
	/* Engine, suppressor, gain (chain_run.h) under one deadline for the block: the suppressor's GPU
	 * gets what the engine's wait left of it. The gain stage's meters are the stats' output peak
	 * and clipped samples too (one scan of the output); the stream's own stage meters the output
	 * only. A suppressor's error live is its own (a muted hop, counted by its bank). */
	struct gf_chain_run chain = {.engine = l->engine,
				     .suppress = l->suppress,
				     .gain = l->gain,
				     .in_channels = l->channels,
				     .out_channels = l->out_channels};
	uint64_t deadline = t0 + gf_engine_deadline_ns(l->engine);
	int err = gf_chain_process(&chain, src, l->gain == l->own_gain ? NULL : src, l->blk_out, frames,
				   deadline, NULL);
	uint64_t dt = gf_now_ns() - t0;
	in_swap |= gf_engine_swap_window(l->engine);

	if (l->tap) /* the input, for analysis on the control thread: bounded, never waits */
		gf_input_tap_push(l->tap, src, frames, l->channels);
	gf_ring_read_advance(l->in_ring, frames); /* src is not used after this */
	if (gap_len)
		atomic_store_explicit(&l->gap_pending, 0, memory_order_release);
	gf_timehist_add(l->hist, dt);
	uint64_t period_ns = (uint64_t)frames * 1000000000u / l->rate;
	if (dt > period_ns) /* the second sample only then: two system calls a block, not four */
		count_late(l, in_swap, gf_thread_use_late_by_host(u0, gf_thread_use_now(), period_ns));
	if (err)
		count(&l->engine_errors, 1);
	note_margin(l);

	emit(l, l->blk_out, split);
	if (gap_len)
		emit(l, NULL, gap_len);
	emit(l, l->blk_out + (size_t)split * l->out_channels, frames - split);
	count(&l->blocks, 1);
}

/* Before audio starts, on this thread: run the engine on a few blocks of
 * silence, so one-time costs (first kernel launches, lazy allocations, cold
 * caches) are not paid by the first real block. The engine's history then
 * holds silence, as it would anyway before the stream. Not the suppressor:
 * silence would start its noise estimate at zero, where the stream's first
 * frames should. */
static void warm_up(struct gf_live *l)
{
	memset(l->blk_in, 0, l->blk_in_bytes);
	for (int i = 0; i < GF_LIVE_WARMUP_BLOCKS; i++)
		gf_engine_process(l->engine, l->blk_in, l->blk_out, l->block);
	atomic_store_explicit(&l->warm, 1, memory_order_release);
}

void *gf_live_worker_main(void *arg)
{
	struct gf_live *l = arg;
	warm_up(l);
	for (;;) {
		/* State first: DRAIN is set after the capture stopped, so the ring
		 * read after it holds everything there will be. */
		int st = atomic_load_explicit(&l->wstate, memory_order_acquire);
		uint32_t avail = gf_ring_read_space(l->in_ring);
		if (avail >= l->block) {
			do_block(l, l->block);
			continue;
		}
		if (st == GF_W_QUIT)
			break;
		if (st == GF_W_DRAIN) {
			if (avail) /* the tail, for the recording */
				do_block(l, avail);
			break;
		}
		wait_input(l);
	}
	return NULL;
}
