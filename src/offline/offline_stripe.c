/*
 * Striped filtering: one long file on several CPU engines at once.
 *
 * The file is cut into stripes of S chunks. Filter threads claim stripes in
 * file order and filter a stripe's chunks in order on their own engine,
 * which starts the stripe from the H input frames before it
 * (gf_engine_reset_history). The reader copies those frames aside as it
 * decodes them, before the previous stripe's thread filters them in place.
 * Stripes start at multiples of 65536 frames (a multiple of every partition
 * the CPU backend chooses; chunks are powers of two) and H covers the
 * engine's whole reach, so each stripe gives the bits one engine streaming
 * the whole file would:
 * the output does not depend on the thread count. The writer takes chunks in
 * file order; the thread whose engine filtered the last chunk runs the tail.
 *
 * Memory: (threads + 1) x S chunks in flight and threads + 3 history slots,
 * capped (STRIPE_MEMORY); starting a stripe costs about an FFT of H frames,
 * so a stripe spans at least STRIPE_SPAN filter lengths.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "deadline.h"
#include "log.h"
#include "offline_internal.h"

#define STRIPE_MEMORY (512ull << 20)
#define STRIPE_SPAN 4u
#define STRIPE_THREADS_MAX 64u
#define EDGE_FRAMES 65536u /* the CPU FFT's longest self-chosen partition */

uint32_t gf_offline_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (uint32_t)CPU_COUNT(&set); /* taskset, cgroups, a scheduler's allocation */
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (uint32_t)n : 1;
}

void gf_offline_stripe_plan(uint64_t frames, uint32_t taps, uint32_t channels, uint32_t chunk_frames,
			    uint32_t max_threads, struct gf_offline_stripes *st)
{
	*st = (struct gf_offline_stripes){.threads = 1, .stripe_chunks = 1, .chunks = GF_OFFLINE_CHUNKS};
	if (max_threads < 2 || chunk_frames == 0 || channels == 0)
		return;
	uint64_t hist = gf_engine_reset_history_frames(taps);
	uint64_t span = (uint64_t)STRIPE_SPAN * taps > hist ? (uint64_t)STRIPE_SPAN * taps : hist;
	uint64_t s = (span + chunk_frames - 1) / chunk_frames;
	/* Stripes start at multiples of 2^16 frames, a partition edge for every
	 * partition the CPU chooses, where the chunk is a power of two below it. */
	uint64_t unit = chunk_frames < EDGE_FRAMES && EDGE_FRAMES % chunk_frames == 0
				? EDGE_FRAMES / chunk_frames
				: 1;
	s = (s + unit - 1) / unit * unit;
	uint64_t stripes = frames ? (frames + s * chunk_frames - 1) / (s * chunk_frames) : UINT64_MAX;
	uint64_t t = max_threads < stripes ? max_threads : stripes;
	if (t > STRIPE_THREADS_MAX)
		t = STRIPE_THREADS_MAX;
	uint64_t chunk_bytes = (uint64_t)chunk_frames * channels * sizeof(float);
	uint64_t hist_bytes = hist * channels * sizeof(float);
	while (t >= 2 && ((t + 1) * s + 2) * chunk_bytes + (t + 3) * hist_bytes > STRIPE_MEMORY)
		t--;
	if (t < 2)
		return;
	st->threads = (uint32_t)t;
	st->stripe_chunks = (uint32_t)s;
	st->hist_frames = (uint32_t)hist;
	st->chunks = (uint32_t)((t + 1) * s + 2);
}

/* ---- reader side -------------------------------------------------------------- */

static int acquire_slot(struct gf_offline_pipeline *p)
{
	int slot = -1;
	pthread_mutex_lock(&p->mu);
	while (slot < 0 && !p->failed) {
		for (uint32_t k = 0; k < p->n_hist && slot < 0; k++)
			if (!p->hist_used[k])
				slot = (int)k;
		if (slot >= 0)
			p->hist_used[slot] = 1;
		else
			pthread_cond_wait(&p->cv, &p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return slot;
}

static void release_slot(struct gf_offline_pipeline *p, int slot)
{
	pthread_mutex_lock(&p->mu);
	p->hist_used[slot] = 0;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

int gf_offline_stripe_note_chunk(struct gf_offline_pipeline *p, uint32_t i)
{
	struct gf_offline_chunk *c = &p->chunk[i];
	uint64_t s = p->stripes.stripe_chunks, cf = p->chunk_frames, h = p->stripes.hist_frames;
	if (c->seq % s == 0 && c->seq > 0) { /* a stripe starts here: its history is complete */
		c->hist = p->reader_hist;
		p->reader_hist = -1;
	}
	/* The frames of this chunk among the H before the next stripe (H <= S chunks). */
	uint64_t first = c->seq * cf, end = first + c->frames;
	uint64_t b = (c->seq / s + 1) * s * cf, from = b - h;
	uint64_t lo = first > from ? first : from, hi = end < b ? end : b;
	if (lo >= hi)
		return 0;
	if (p->reader_hist < 0 && (p->reader_hist = acquire_slot(p)) < 0)
		return -1;
	size_t fb = (size_t)p->channels * sizeof(float);
	memcpy((char *)p->hist_buf[p->reader_hist] + (lo - from) * fb, (char *)c->buf + (lo - first) * fb,
	       (hi - lo) * fb);
	return 0;
}

/* ---- filter threads ------------------------------------------------------------- */

struct stripe_thread {
	struct gf_offline_pipeline *p;
	struct gf_engine *e; /* thread 0: the lane's; else its own */
	int own;
	int64_t prev_seq; /* the chunk the engine filtered last; -1: none, at the file's start */
	pthread_t tid;
	double busy_ms;
	uint64_t nonfinite;
};

static int start_stripe(struct stripe_thread *t, struct gf_offline_chunk *c)
{
	struct gf_offline_pipeline *p = t->p;
	struct gf_errbuf eb = {{0}};
	int err;
	if (c->seq == 0) {
		err = gf_engine_reset(t->e, &eb);
	} else if (c->hist < 0) {
		gf_errbuf_set(&eb, "stripe at chunk %llu has no history", (unsigned long long)c->seq);
		err = GF_E_INVAL;
	} else {
		err = gf_engine_reset_history(t->e, p->hist_buf[c->hist], p->stripes.hist_frames, &eb);
		release_slot(p, c->hist);
		c->hist = -1;
	}
	if (err)
		gf_offline_fail(p, err, &eb);
	return err;
}

/* Filter stripe @p k's chunks. @return 1 if it was whole, 0 if the file ended in it, -1 failed. */
static int run_stripe(struct stripe_thread *t, uint64_t k)
{
	struct gf_offline_pipeline *p = t->p;
	uint64_t first = k * p->stripes.stripe_chunks;
	for (uint64_t seq = first; seq < first + p->stripes.stripe_chunks; seq++) {
		uint32_t i;
		int r = gf_offline_take_seq(p, &p->decoded_q, &p->reader_done, seq, &i);
		if (r != 1)
			return r;
		struct gf_offline_chunk *c = &p->chunk[i];
		if (seq == first && start_stripe(t, c) != 0) {
			gf_offline_give(p, &p->free_q, i);
			return -1;
		}
		double t0 = (1e3 * gf_now_s());
		int sup_failed; /* never: a file with a suppressor is not striped (offline.c) */
		int err = gf_offline_run_chunk(p, t->e, c, seq * p->chunk_frames, &sup_failed);
		t->busy_ms += (1e3 * gf_now_s()) - t0;
		if (err) {
			gf_offline_chunk_failed(p, i, seq * p->chunk_frames, err, sup_failed);
			return -1;
		}
		t->prev_seq = (int64_t)seq;
		gf_offline_give(p, &p->filtered_q, i);
	}
	return 1;
}

static void *stripe_main(void *arg)
{
	struct stripe_thread *t = arg;
	struct gf_offline_pipeline *p = t->p;
	int r = 1;
	if (!t->e) {
		/* Without an engine of its own (memory: every engine holds the filter's
		 * spectra) this thread leaves the stripes to the others: thread 0 has
		 * the lane's, so the file is filtered whatever happens here. */
		struct gf_errbuf eb = {{0}};
		int err = gf_engine_new(&t->e, p->stripe_params, p->stripe_fs, &eb);
		if (err) {
			t->e = NULL;
			gf_warn("offline: a filter thread has no engine (%s): one thread fewer",
				eb.msg[0] ? eb.msg : gf_strerror(err));
			r = -1;
		}
	}
	while (r == 1) {
		pthread_mutex_lock(&p->mu);
		uint64_t k = p->stripe_next++;
		pthread_mutex_unlock(&p->mu);
		r = run_stripe(t, k);
	}
	/* The file ended (the reader is done): the engine past the last chunk rings out. */
	if (r == 0 && t->prev_seq == (int64_t)p->input_chunks - 1)
		gf_offline_flush_tail(p, t->e);
	struct gf_engine_stats es;
	if (t->own && t->e) {
		gf_engine_get_stats(t->e, &es);
		t->nonfinite = es.nonfinite_blocks;
	}
	pthread_mutex_lock(&p->mu);
	p->threads_running--;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Until every filter thread is done: progress, and stop requests. */
static void watch(struct gf_offline_pipeline *p, struct gf_progress *prog)
{
	pthread_mutex_lock(&p->mu);
	while (p->threads_running) {
		if (p->o->stop && atomic_load(p->o->stop) && !p->failed) {
			struct gf_errbuf eb;
			gf_errbuf_set(&eb, "interrupted: %s was not written", p->o->output);
			gf_offline_fail_locked(p, GF_E_INTERRUPTED, &eb);
		}
		uint64_t done = p->frames_written;
		pthread_mutex_unlock(&p->mu);
		gf_progress_update(prog, done);
		pthread_mutex_lock(&p->mu);
		struct timespec ts = gf_deadline_in(CLOCK_MONOTONIC, 100000000L);
		if (p->threads_running)
			pthread_cond_timedwait(&p->cv, &p->mu, &ts);
	}
	pthread_mutex_unlock(&p->mu);
}

void gf_offline_stripe_run(struct gf_offline_pipeline *p, struct gf_engine *e, struct gf_progress *prog)
{
	uint32_t n = p->stripes.threads;
	struct stripe_thread *t = calloc(n, sizeof(*t));
	if (!t) {
		struct gf_errbuf eb;
		gf_errbuf_set(&eb, "out of memory for %u filter threads", n);
		gf_offline_fail(p, GF_E_NOMEM, &eb);
		return;
	}
	uint32_t started = 0;
	for (; started < n; started++) {
		t[started] = (struct stripe_thread){
			.p = p, .e = started ? NULL : e, .own = started > 0, .prev_seq = started ? -2 : -1};
		pthread_mutex_lock(&p->mu);
		p->threads_running++;
		pthread_mutex_unlock(&p->mu);
		if (pthread_create(&t[started].tid, NULL, stripe_main, &t[started]) != 0) {
			pthread_mutex_lock(&p->mu);
			p->threads_running--;
			pthread_mutex_unlock(&p->mu);
			break;
		}
	}
	if (started == 0) {
		struct gf_errbuf eb;
		gf_errbuf_set(&eb, "cannot start a filter thread");
		gf_offline_fail(p, GF_E_SYSTEM, &eb);
	} else if (started < n) {
		gf_debug("offline: %u of %u filter threads started", started, n);
	}
	watch(p, prog);
	for (uint32_t k = 0; k < started; k++) {
		pthread_join(t[k].tid, NULL);
		p->busy_ms[1] += t[k].busy_ms;
		p->stripe_nonfinite += t[k].nonfinite;
		if (t[k].own)
			gf_engine_free(t[k].e);
	}
	free(t);
}
