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
 * usage: bench_live [--backend cpu|cuda|auto] [--algo auto|direct|fft]
 *                   [--blocks N] [--trial S] [--channels 2,8,32] [--sizes 64,128,256]
 *                   [--no-latency] [--no-capacity] [--unpaced]
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "log.h"
#include "rt.h"

#define RATE 48000u

struct opts {
	enum gf_backend_kind backend;
	enum gf_algo algo;
	uint32_t blocks;
	double trial_s;
	uint32_t channels[8];
	int n_channels;
	uint32_t sizes[8];
	int n_sizes;
	int latency, capacity, paced;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

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

static struct gf_engine *make_engine(const struct opts *o, uint32_t ch, uint32_t taps, uint32_t block)
{
	struct gf_filter_set *fs;
	if (gf_filter_set_new(&fs, ch, taps))
		return NULL;
	for (size_t i = 0; i < (size_t)ch * taps; i++)
		fs->coeffs[i] = rnd() * (float)exp(-4.0 * (double)(i % taps) / taps);
	struct gf_engine_params p = {
		.backend = o->backend, .algo = o->algo, .channels = ch, .max_block = block, .max_taps = taps};
	struct gf_engine *e = NULL;
	struct gf_errbuf eb = {{0}};
	if (gf_engine_new(&e, &p, fs, &eb))
		fprintf(stderr, "bench_live: %u ch x %u taps: %s\n", ch, taps, eb.msg);
	gf_filter_set_free(fs);
	return e;
}

struct run {
	uint64_t *ns; /* process time per block */
	uint32_t n;
	uint32_t missed; /* blocks finished after their deadline (wake-up delays included) */
	uint32_t late;	 /* blocks whose process() took longer than the block period */
};

/* Run @p n blocks paced like the live worker; stops early after @p stop_after
 * late blocks (0: never). */
static void run_blocks(struct gf_engine *e, uint32_t ch, uint32_t block, uint32_t n, int paced,
		       uint32_t stop_after, struct run *r)
{
	float *in = malloc((size_t)block * ch * sizeof(float));
	float *out = malloc((size_t)block * ch * sizeof(float));
	for (size_t i = 0; i < (size_t)block * ch; i++)
		in[i] = rnd();
	for (int i = 0; i < 50; i++) /* warm up: first partitions, page faults, GPU clocks */
		gf_engine_process(e, in, out, block);
	uint64_t period = (uint64_t)block * 1000000000u / RATE;
	uint64_t t0 = now_ns();
	r->n = 0;
	r->missed = 0;
	r->late = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint64_t avail = t0 + (k + 1) * period;
		if (paced)
			sleep_until(avail);
		uint64_t a = now_ns();
		gf_engine_process(e, in, out, block);
		uint64_t b = now_ns();
		r->ns[r->n++] = b - a;
		if (paced && b > avail + 2 * period)
			r->missed++;
		if (b - a > period && ++r->late == stop_after)
			break;
	}
	free(in);
	free(out);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void latency_table(const struct opts *o)
{
	printf("\n== Added latency per block: engine process() time, 2 ch x 4095 taps, %u blocks%s ==\n",
	       o->blocks, o->paced ? ", paced at 48 kHz" : ", back to back");
	printf("%6s %9s %10s %10s %10s %8s %5s %7s  %s\n", "block", "period", "median", "p99", "max",
	       "max/per", "late", "missed", "engine");
	struct run r = {.ns = malloc(sizeof(uint64_t) * o->blocks)};
	for (int i = 0; i < o->n_sizes; i++) {
		const uint32_t *blocks = o->sizes;
		struct gf_engine *e = make_engine(o, 2, 4095, blocks[i]);
		if (!e)
			continue;
		run_blocks(e, 2, blocks[i], o->blocks, o->paced, 0, &r);
		qsort(r.ns, r.n, sizeof(uint64_t), cmp_u64);
		double per_us = 1e6 * blocks[i] / RATE;
		double med = r.ns[r.n / 2] / 1e3, p99 = r.ns[(size_t)(r.n * 0.99)] / 1e3,
		       mx = r.ns[r.n - 1] / 1e3;
		printf("%6u %7.0fus %8.1fus %8.1fus %8.1fus %7.1f%% %5u %7u  %s\n", blocks[i], per_us, med,
		       p99, mx, 100.0 * mx / per_us, r.late, r.missed, gf_engine_describe(e));
		fflush(stdout);
		gf_engine_free(e);
	}
	free(r.ns);
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
		for (int c = 0; c < o->n_channels; c++) {
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
			   .trial_s = 2.0,
			   .channels = {2, 8, 32},
			   .n_channels = 3,
			   .sizes = {64, 128, 256},
			   .n_sizes = 3,
			   .latency = 1,
			   .capacity = 1,
			   .paced = 1};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--backend") == 0 && v && gf_backend_parse(v, &o->backend) == 0) {
			i++;
		} else if (strcmp(a, "--algo") == 0 && v && gf_algo_parse(v, &o->algo) == 0) {
			i++;
		} else if (strcmp(a, "--blocks") == 0 && v && atoi(v) > 0) {
			o->blocks = (uint32_t)atoi(v);
			i++;
		} else if (strcmp(a, "--trial") == 0 && v && atof(v) > 0) {
			o->trial_s = atof(v);
			i++;
		} else if ((strcmp(a, "--channels") == 0 || strcmp(a, "--sizes") == 0) && v) {
			uint32_t *list = a[2] == 'c' ? o->channels : o->sizes;
			int *n = a[2] == 'c' ? &o->n_channels : &o->n_sizes;
			*n = 0;
			for (char *s = argv[++i]; *s && *n < 8; s += strspn(s, ",")) {
				uint32_t x = (uint32_t)strtoul(s, &s, 10);
				if (x < 1 || x > 8192)
					return -1;
				list[(*n)++] = x;
			}
		} else if (strcmp(a, "--no-latency") == 0) {
			o->latency = 0;
		} else if (strcmp(a, "--no-capacity") == 0) {
			o->capacity = 0;
		} else if (strcmp(a, "--unpaced") == 0) {
			o->paced = 0;
		} else {
			fprintf(stderr,
				"usage: %s [--backend cpu|cuda|auto] [--algo auto|direct|fft] "
				"[--blocks N] [--trial S] [--channels 2,8,32] [--sizes 64,128,256] "
				"[--no-latency] "
				"[--no-capacity] [--unpaced]\n",
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
	/* Like the live worker: real-time priority where permitted. */
	int prio = gf_rt_set_fifo(pthread_self(), GF_RT_WORKER_PRIO);
	printf("bench_live: backend %s, %s, worker priority %s\n",
	       o.backend == GF_BACKEND_CUDA  ? "cuda"
	       : o.backend == GF_BACKEND_CPU ? "cpu"
					     : "auto",
	       o.paced ? "paced like a 48 kHz device" : "unpaced", prio ? "SCHED_FIFO" : "normal");
	if (o.latency)
		latency_table(&o);
	if (o.capacity)
		capacity_table(&o);
	return 0;
}
