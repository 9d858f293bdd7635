/*
 * Live-mode figures without audio devices: the engine runs in a loop paced
 * like the live worker behind a device callback at 48 kHz: block k becomes
 * available at t0 + (k+1)·period and is due two periods later (gpufir's
 * latency with a device period equal to the block: one period for the work,
 * one of slack), and each block should take at most one period.
 *
 * 1. Added latency per block: engine process() time, median / p99 / max over
 *    --blocks blocks (default 100000), 2 channels x 4095 taps, blocks of 64,
 *    128 and 256 frames; "late" counts blocks whose process() took longer
 *    than the block period (gpufir's late_blocks), "missed" blocks that
 *    finished after their deadline counting the thread's wake-up delay too
 *    (without real-time priority that delay dominates).
 * 2. Capacity: for each block size and channel count, the longest filter
 *    (searched over taps: doubling, then bisection to about 6 %) with no late
 *    block in --trial seconds; the figure is channels x taps.
 *
 *    With --backend cuda the same run first measures the bare PCIe round trip
 *    of the block (cuda_floor.h: pinned copies + empty kernel + synchronize;
 *    host-mapped memory + synchronize; host-mapped memory + a polled
 *    completion word), paced the same way, and prints each engine figure's
 *    ratio to the copy and mapped floors.
 * 3. --churn TAPS: the latency table again while another thread creates and
 *    frees engines of 2 ch x TAPS taps in a loop (a reload's control-thread
 *    work), to show whether instance set-up stalls the running one.
 *
 * 4. --crossfade: block times inside crossfades against outside them, while
 *    another thread publishes a new filter every ~100 ms (the reload path).
 *
 * usage: bench_live [--backend cpu|cuda|auto] [--algo auto|direct|fft] [--taps N]
 *                   [--gpu-path launched|auto|persistent]
 *                   [--blocks N] [--trial S] [--channels 2,8,32] [--sizes 64,128,256]
 *                   [--churn TAPS] [--capacity-taps T1,T2] [--crossfade] [--no-floor]
 *                   [--no-latency] [--no-capacity] [--unpaced] [--phase N]
 *
 * --phase N: with the latency table, where in a cycle of N blocks the slowest
 *    1% of blocks fall (N = an FFT partition's blocks: work tied to a
 *    segment's end shows as a peak).
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "engine.h"
#include "gpu.h"
#include "log.h"
#include "rt.h"

#ifdef GPUFIR_HAVE_CUDA
#include "cuda_floor.h"
#endif

#define RATE 48000u

struct opts {
	enum gf_backend_kind backend;
	enum gf_algo algo;
	enum gf_gpu_path gpu_path; /* --gpu-path: the config's gpu_path */
	uint32_t blocks, taps, churn_taps;
	uint32_t cap_taps[8]; /* --capacity-taps: check these (one per block size) instead of searching */
	int n_cap_taps;
	double trial_s;
	uint32_t channels[8];
	int n_channels;
	uint32_t sizes[8];
	int n_sizes;
	int latency, capacity, paced, floor, crossfade;
	uint32_t phase; /* --phase N: where in a cycle of N blocks the slowest 1% fall */
};

static void sleep_until(uint64_t t)
{
	struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
		;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (float)((double)((rng * 0x2545F4914F6CDD1Dull) >> 40) / (double)(1ull << 23) - 1.0);
}

/* Random taps with a decaying envelope, like a measured response. */
static struct gf_filter_set *make_fs(uint32_t ch, uint32_t taps)
{
	struct gf_filter_set *fs;
	if (gf_filter_set_new(&fs, ch, taps))
		return NULL;
	for (size_t i = 0; i < (size_t)ch * taps; i++)
		fs->coeffs[i] = rnd() * (float)exp(-4.0 * (double)(i % taps) / taps);
	return fs;
}

static struct gf_engine *make_engine_xf(const struct opts *o, uint32_t ch, uint32_t taps, uint32_t block,
					uint32_t crossfade)
{
	struct gf_filter_set *fs = make_fs(ch, taps);
	if (!fs)
		return NULL;
	struct gf_engine_params p = {.backend = o->backend,
				     .algo = o->algo,
				     .channels = ch,
				     .max_block = block,
				     .max_taps = taps,
				     .crossfade_frames = crossfade,
				     .live_rate = RATE, /* auto: both backends timed on these blocks */
				     .gpu_path = o->gpu_path};
	struct gf_engine *e = NULL;
	struct gf_errbuf eb = {{0}};
	if (gf_engine_new(&e, &p, fs, &eb))
		fprintf(stderr, "bench_live: %u ch x %u taps: %s\n", ch, taps, eb.msg);
	gf_filter_set_free(fs);
	return e;
}

static struct gf_engine *make_engine(const struct opts *o, uint32_t ch, uint32_t taps, uint32_t block)
{
	return make_engine_xf(o, ch, taps, block, 0);
}

struct run {
	uint64_t *ns; /* process time per block */
	uint32_t n;
	uint32_t missed; /* blocks finished after their deadline (wake-up delays included) */
	uint32_t late;	 /* blocks whose process() took longer than the block period */
};

/* What one block does: an engine's process() or a bare round trip. */
struct step {
	struct gf_engine *e;
#ifdef GPUFIR_HAVE_CUDA
	struct gf_cuda_floor *floor;
#endif
};

static void do_step(const struct step *st, const float *in, float *out, uint32_t block)
{
#ifdef GPUFIR_HAVE_CUDA
	if (st->floor) {
		(void)gf_cuda_floor_trip(st->floor, in, out);
		return;
	}
#endif
	gf_engine_process(st->e, in, out, block);
}

/* Run @p n blocks paced like the live worker; stops early after @p stop_after
 * late blocks (0: never). */
static void run_steps(const struct step *st, uint32_t ch, uint32_t block, uint32_t n, int paced,
		      uint32_t stop_after, struct run *r)
{
	float *in = malloc((size_t)block * ch * sizeof(float));
	float *out = malloc((size_t)block * ch * sizeof(float));
	for (size_t i = 0; i < (size_t)block * ch; i++)
		in[i] = rnd();
	for (int i = 0; i < 50; i++) /* warm up: first partitions, page faults, GPU clocks */
		do_step(st, in, out, block);
	uint64_t period = (uint64_t)block * 1000000000u / RATE;
	uint64_t t0 = gf_now_ns();
	r->n = 0;
	r->missed = 0;
	r->late = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint64_t avail = t0 + (k + 1) * period;
		if (paced)
			sleep_until(avail);
		uint64_t a = gf_now_ns();
		do_step(st, in, out, block);
		uint64_t b = gf_now_ns();
		r->ns[r->n++] = b - a;
		if (paced && b > avail + 2 * period)
			r->missed++;
		if (b - a > period && ++r->late == stop_after)
			break;
	}
	free(in);
	free(out);
}

static void run_blocks(struct gf_engine *e, uint32_t ch, uint32_t block, uint32_t n, int paced,
		       uint32_t stop_after, struct run *r)
{
	struct step st = {.e = e};
	run_steps(&st, ch, block, n, paced, stop_after, r);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct figs {
	double med, p99, max;
};

static struct figs sorted_figs(struct run *r)
{
	qsort(r->ns, r->n, sizeof(uint64_t), cmp_u64);
	return (struct figs){r->ns[r->n / 2] / 1e3, r->ns[(size_t)(r->n * 0.99)] / 1e3,
			     r->ns[r->n - 1] / 1e3};
}

/* The bare round trips of one block size (zeros where there is no GPU). */
static void floors(const struct opts *o, uint32_t ch, uint32_t block, struct run *r, struct figs f[3])
{
	static const char *names[3] = {"floor: pinned copies + sync", "floor: mapped + sync",
				       "floor: mapped + polled word"};
	memset(f, 0, 3 * sizeof(*f));
#ifdef GPUFIR_HAVE_CUDA
	if (o->backend != GF_BACKEND_CUDA || !o->floor)
		return;
	for (int k = 0; k < 3; k++) {
		struct step st = {0};
		if (gf_cuda_floor_new(&st.floor, 0, block * ch, k))
			continue;
		run_steps(&st, ch, block, o->blocks, o->paced, 0, r);
		f[k] = sorted_figs(r);
		double per_us = 1e6 * block / RATE;
		printf("%6u %7.0fus %8.1fus %8.1fus %8.1fus %7.1f%% %5s %7s  %s\n", block, per_us, f[k].med,
		       f[k].p99, f[k].max, 100.0 * f[k].max / per_us, "-", "-", names[k]);
		gf_cuda_floor_free(st.floor);
	}
#else
	(void)o, (void)ch, (void)block, (void)r, (void)names;
#endif
}

/* Where in a cycle of @p n blocks (an FFT partition's worth) the slowest 1% of @p r fall:
 * work tied to a segment's end shows as a peak at one phase, host jitter spreads evenly. */
static void phase_histogram(const struct run *r, uint32_t n)
{
	uint64_t *s = malloc(r->n * sizeof(uint64_t));
	uint32_t *count = calloc(n, sizeof(uint32_t)), total = 0;
	if (!s || !count || r->n == 0) {
		free(s);
		free(count);
		return;
	}
	memcpy(s, r->ns, r->n * sizeof(uint64_t));
	qsort(s, r->n, sizeof(uint64_t), cmp_u64);
	uint64_t slow = s[(size_t)(r->n * 0.99)];
	for (uint32_t i = 0; i < r->n; i++)
		if (r->ns[i] >= slow) {
			count[i % n]++;
			total++;
		}
	printf("%6s %9s slowest 1%% (>= %.1f us, %u blocks) by block index mod %u (phase:count):", "", "",
	       slow / 1e3, total, n);
	for (uint32_t k = 0; k < n; k++)
		if (count[k])
			printf(" %u:%u", k, count[k]);
	printf("\n");
	free(s);
	free(count);
}

static atomic_int g_churn_stop;
static atomic_uint g_churn_cycles;

/* Create and free engines of 2 ch x churn_taps taps until told to stop. */
static void *churn_main(void *arg)
{
	const struct opts *o = arg;
	while (!atomic_load(&g_churn_stop)) {
		struct gf_engine *e = make_engine(o, 2, o->churn_taps, o->sizes[0]);
		gf_engine_free(e);
		atomic_fetch_add(&g_churn_cycles, 1);
	}
	return NULL;
}

static void latency_table(const struct opts *o, int churn)
{
	printf("\n== Added latency per block: engine process() time, 2 ch x %u taps, %u blocks%s%s ==\n",
	       o->taps, o->blocks, o->paced ? ", paced at 48 kHz" : ", back to back",
	       churn ? ", another thread creating and freeing engines" : "");
	printf("%6s %9s %10s %10s %10s %8s %5s %7s  %s\n", "block", "period", "median", "p99", "max",
	       "max/per", "late", "missed", "engine");
	struct run r = {.ns = malloc(sizeof(uint64_t) * o->blocks)};
	for (int i = 0; i < o->n_sizes; i++) {
		const uint32_t *blocks = o->sizes;
		struct figs fl[3];
		if (!churn)
			floors(o, 2, blocks[i], &r, fl);
		struct gf_engine *e = make_engine(o, 2, o->taps, blocks[i]);
		if (!e)
			continue;
		pthread_t th;
		int churning = churn && pthread_create(&th, NULL, churn_main, (void *)o) == 0;
		atomic_store(&g_churn_cycles, 0);
		run_blocks(e, 2, blocks[i], o->blocks, o->paced, 0, &r);
		if (churning) {
			atomic_store(&g_churn_stop, 1);
			pthread_join(th, NULL);
			atomic_store(&g_churn_stop, 0);
		}
		if (o->phase)
			phase_histogram(&r, o->phase);
		struct figs f = sorted_figs(&r);
		double per_us = 1e6 * blocks[i] / RATE;
		printf("%6u %7.0fus %8.1fus %8.1fus %8.1fus %7.1f%% %5u %7u  %s\n", blocks[i], per_us, f.med,
		       f.p99, f.max, 100.0 * f.max / per_us, r.late, r.missed, gf_engine_describe(e));
		if (churning)
			printf("%6s %9s %u engines of %u taps created and freed meanwhile\n", "", "",
			       atomic_load(&g_churn_cycles), o->churn_taps);
		else if (fl[0].med > 0 && fl[1].med > 0)
			printf("%6s %9s ratio to the copy floor: median %.2fx p99 %.2fx; to the mapped "
			       "floor: "
			       "median %.2fx p99 %.2fx\n",
			       "", "", f.med / fl[0].med, f.p99 / fl[0].p99, f.med / fl[1].med,
			       f.p99 / fl[1].p99);
		fflush(stdout);
		gf_engine_free(e);
	}
	free(r.ns);
}

/* The swapper: a control thread publishing a new filter every ~100 ms, reaping after each crossfade. */
struct swapper {
	struct gf_engine *e;
	struct gf_filter_set *fs[2];
	atomic_int stop;
	unsigned swaps;
};

static void *swapper_main(void *arg)
{
	struct swapper *w = arg;
	const struct timespec tick = {0, 1000000}, gap = {0, 100000000};
	while (!atomic_load(&w->stop)) {
		struct gf_errbuf eb = {{0}};
		if (gf_engine_swap(w->e, w->fs[w->swaps & 1], &eb) == 0)
			w->swaps++;
		while (gf_engine_swap_pending(w->e) && !atomic_load(&w->stop))
			nanosleep(&tick, NULL);
		gf_engine_reap(w->e);
		nanosleep(&gap, NULL);
	}
	return NULL;
}

/*
 * Block time inside crossfades against outside them: 2 ch x taps, the daemon's
 * default 20 ms crossfade, a new filter every ~100 ms from another thread. A
 * block counts as inside when a swap was pending as it started or ended.
 */
static void crossfade_table(const struct opts *o)
{
	const uint32_t xf = RATE / 50;
	printf("\n== Block time during crossfades (%u frames) against outside them, 2 ch x %u taps, "
	       "%u blocks, paced ==\n",
	       xf, o->taps, o->blocks);
	printf("%6s %8s %10s %10s %10s %10s %10s %10s %8s %7s\n", "block", "swaps", "in med", "in p99",
	       "in max", "out med", "out p99", "out max", "p99 x", "path");
	struct run rin = {.ns = malloc(sizeof(uint64_t) * o->blocks)};
	struct run rout = {.ns = malloc(sizeof(uint64_t) * o->blocks)};
	for (int i = 0; i < o->n_sizes; i++) {
		uint32_t block = o->sizes[i];
		struct swapper w = {.e = make_engine_xf(o, 2, o->taps, block, xf)};
		w.fs[0] = make_fs(2, o->taps);
		w.fs[1] = make_fs(2, o->taps);
		if (!w.e || !w.fs[0] || !w.fs[1])
			goto next;
		float *buf = malloc((size_t)block * 2 * sizeof(float));
		for (size_t k = 0; k < (size_t)block * 2; k++)
			buf[k] = rnd();
		for (int k = 0; k < 50; k++)
			gf_engine_process(w.e, buf, buf, block);
		pthread_t th;
		if (pthread_create(&th, NULL, swapper_main, &w) != 0) {
			free(buf);
			goto next;
		}
		uint64_t period = (uint64_t)block * 1000000000u / RATE, t0 = gf_now_ns();
		rin.n = rout.n = 0;
		for (uint32_t k = 0; k < o->blocks; k++) {
			sleep_until(t0 + (k + 1) * period);
			int pend = gf_engine_swap_pending(w.e);
			uint64_t a = gf_now_ns();
			gf_engine_process(w.e, buf, buf, block);
			uint64_t b = gf_now_ns();
			pend |= gf_engine_swap_pending(w.e);
			struct run *r = pend ? &rin : &rout;
			r->ns[r->n++] = b - a;
			for (size_t q = 0; q < (size_t)block * 2; q++) /* keep the signal bounded */
				buf[q] = rnd();
		}
		atomic_store(&w.stop, 1);
		pthread_join(th, NULL);
		free(buf);
		if (rin.n > 10 && rout.n > 10) {
			struct figs fi = sorted_figs(&rin), fo = sorted_figs(&rout);
			printf("%6u %8u %9.1fus %9.1fus %9.1fus %9.1fus %9.1fus %9.1fus %7.2fx  %s\n", block,
			       w.swaps, fi.med, fi.p99, fi.max, fo.med, fo.p99, fo.max, fi.p99 / fo.p99,
			       gf_engine_describe(w.e));
		} else {
			printf("%6u %8u (too few blocks inside or outside crossfades)\n", block, w.swaps);
		}
		fflush(stdout);
	next:
		gf_engine_free(w.e);
		gf_filter_set_free(w.fs[0]);
		gf_filter_set_free(w.fs[1]);
	}
	free(rin.ns);
	free(rout.ns);
}

/* Does @p ch x @p taps process every block of the trial within its period? */
static int feasible(const struct opts *o, uint32_t ch, uint32_t taps, uint32_t block, char *algo,
		    size_t algo_len, double *p99_us)
{
	struct gf_engine *e = make_engine(o, ch, taps, block);
	if (!e)
		return 0;
	uint32_t n = (uint32_t)(o->trial_s * RATE / block);
	n = n < 200 ? 200 : n;
	struct run r = {.ns = malloc(sizeof(uint64_t) * n)};
	run_blocks(e, ch, block, n, 1, 1, &r);
	qsort(r.ns, r.n, sizeof(uint64_t), cmp_u64);
	*p99_us = r.ns[(size_t)(r.n * 0.99)] / 1e3;
	snprintf(algo, algo_len, "%s", gf_engine_algo_name(e));
	int ok = r.late == 0;
	free(r.ns);
	gf_engine_free(e);
	return ok;
}

static void capacity_table(const struct opts *o)
{
	const uint32_t *blocks = o->sizes;
	printf("\n== Capacity at 48 kHz: longest filter with no late block (process() within the "
	       "block period) in %.1f s ==\n",
	       o->trial_s);
	printf("%6s %9s %10s %10s %14s %9s  %s\n", "block", "channels", "taps", "ch x taps", "p99 (period)",
	       "algo", "");
	for (int i = 0; i < o->n_sizes; i++) {
		for (int c = 0; c < o->n_channels && i < o->n_cap_taps; c++) {
			char a[16];
			double q = 0;
			uint32_t ch = o->channels[c], t = o->cap_taps[i];
			int ok = feasible(o, ch, t, blocks[i], a, sizeof(a), &q);
			printf("%6u %9u %10u %10.3g %7.0f/%-6.0f %9s  %s\n", blocks[i], ch, t, (double)t * ch,
			       q, 1e6 * blocks[i] / RATE, a, ok ? "no late block" : "LATE");
			fflush(stdout);
		}
		for (int c = 0; c < o->n_channels && !o->n_cap_taps; c++) {
			uint32_t ch = o->channels[c];
			char algo[16] = "-", a[16];
			double p99 = 0, q;
			/* Double until a late block, then bisect between the last good and the first bad. */
			uint32_t good = 0, bad = 0, t = 255;
			while (!bad && t <= (1u << 24)) {
				if (feasible(o, ch, t, blocks[i], a, sizeof(a), &q)) {
					good = t;
					p99 = q;
					memcpy(algo, a, sizeof(algo));
					t = t * 2 + 1;
				} else {
					bad = t;
				}
			}
			while (bad && good && bad - good > (good / 16 > 16 ? good / 16 : 16)) {
				t = good + (bad - good) / 2;
				if (feasible(o, ch, t, blocks[i], a, sizeof(a), &q)) {
					good = t;
					p99 = q;
					memcpy(algo, a, sizeof(algo));
				} else {
					bad = t;
				}
			}
			printf("%6u %9u %10u %10.3g %7.0f/%-6.0f %9s  %s\n", blocks[i], ch, good,
			       (double)good * ch, p99, 1e6 * blocks[i] / RATE, algo,
			       good ? (bad ? "" : "(search limit)") : "(none)");
			fflush(stdout);
		}
	}
}

static int parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){.backend = GF_BACKEND_CPU,
			   .blocks = 100000,
			   .taps = 4095,
			   .trial_s = 2.0,
			   .channels = {2, 8, 32},
			   .n_channels = 3,
			   .sizes = {64, 128, 256},
			   .n_sizes = 3,
			   .latency = 1,
			   .capacity = 1,
			   .paced = 1,
			   .floor = 1};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--backend") == 0 && v && gf_backend_parse(v, &o->backend) == 0) {
			i++;
		} else if (strcmp(a, "--algo") == 0 && v && gf_algo_parse(v, &o->algo) == 0) {
			i++;
		} else if (strcmp(a, "--gpu-path") == 0 && v && gf_gpu_path_parse(v, &o->gpu_path) == 0) {
			i++;
		} else if (strcmp(a, "--blocks") == 0 && v && atoi(v) > 0) {
			o->blocks = (uint32_t)atoi(v);
			i++;
		} else if (strcmp(a, "--taps") == 0 && v && atoi(v) > 0) {
			o->taps = (uint32_t)atoi(v);
			i++;
		} else if (strcmp(a, "--phase") == 0 && v && atoi(v) > 0) {
			o->phase = (uint32_t)atoi(v);
			i++;
		} else if (strcmp(a, "--churn") == 0 && v && atoi(v) > 0) {
			o->churn_taps = (uint32_t)atoi(v);
			i++;
		} else if (strcmp(a, "--trial") == 0 && v && atof(v) > 0) {
			o->trial_s = atof(v);
			i++;
		} else if ((strcmp(a, "--channels") == 0 || strcmp(a, "--sizes") == 0 ||
			    strcmp(a, "--capacity-taps") == 0) &&
			   v) {
			int taps = strcmp(a, "--capacity-taps") == 0;
			uint32_t *list = taps ? o->cap_taps : a[2] == 'c' ? o->channels : o->sizes;
			int *n = taps ? &o->n_cap_taps : a[2] == 'c' ? &o->n_channels : &o->n_sizes;
			*n = 0;
			for (char *s = argv[++i]; *s && *n < 8; s += strspn(s, ",")) {
				uint32_t x = (uint32_t)strtoul(s, &s, 10);
				if (x < 1 || (!taps && x > 8192))
					return -1;
				list[(*n)++] = x;
			}
		} else if (strcmp(a, "--no-latency") == 0) {
			o->latency = 0;
		} else if (strcmp(a, "--no-capacity") == 0) {
			o->capacity = 0;
		} else if (strcmp(a, "--crossfade") == 0) {
			o->crossfade = 1;
		} else if (strcmp(a, "--no-floor") == 0) {
			o->floor = 0;
		} else if (strcmp(a, "--unpaced") == 0) {
			o->paced = 0;
		} else {
			fprintf(stderr,
				"usage: %s [--backend cpu|cuda|auto] [--algo auto|direct|fft] "
				"[--gpu-path launched|auto|persistent] [--taps N] [--blocks N] [--trial S] "
				"[--channels 2,8,32] [--sizes "
				"64,128,256] [--churn TAPS] [--capacity-taps T1,T2] [--crossfade] "
				"[--no-floor] "
				"[--no-latency] "
				"[--no-capacity] [--unpaced] [--phase N]\n",
				argv[0]);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	if (parse(argc, argv, &o))
		return 2;
	gf_log_set_level(GF_LOG_WARN);
	if (o.gpu_path != GF_GPU_PATH_LAUNCHED) /* before anything starts CUDA: the floor measures first */
		gf_cuda_ask_persistent();
	/* Like the live worker: real-time priority where permitted. */
	int prio = gf_rt_set_fifo(pthread_self(), GF_RT_WORKER_PRIO);
	printf("bench_live: backend %s, %s, worker priority %s\n",
	       o.backend == GF_BACKEND_CUDA  ? "cuda"
	       : o.backend == GF_BACKEND_CPU ? "cpu"
					     : "auto",
	       o.paced ? "paced like a 48 kHz device" : "unpaced", prio ? "SCHED_FIFO" : "normal");
	if (o.latency)
		latency_table(&o, 0);
	if (o.churn_taps)
		latency_table(&o, 1);
	if (o.crossfade)
		crossfade_table(&o);
	if (o.capacity)
		capacity_table(&o);
	return 0;
}
