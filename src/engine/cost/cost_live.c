/*
 * Auto for a stream: which backend runs this stream's blocks at the lower
 * cost. Unlike a file, a stream has no size to weigh CUDA's start-up against;
 * what matters is the time of one block, and its tail: for a short filter on
 * a few channels the CPU returns a block in a few microseconds, while any GPU
 * path pays a launch and two PCIe crossings (tens of microseconds), and has
 * more ways to be late (driver, co-tenants). So both backends run the same
 * blocks, paced like the stream's, on the control thread before the engine
 * exists, and the lower 99th percentile wins, the CPU unless the GPU is
 * clearly better (GF_COST_LIVE_GPU_MARGIN). Measured once per shape and
 * process: an engine rebuilt for the same shape (a restart, a reload that
 * needs one) reuses the answer.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "cost.h"
#include "engine_internal.h"
#include "gpu.h"
#include "log.h"

#define WARMUP_BLOCKS 8
#define MAX_TIMED_BLOCKS 64
#define TIMING_BUDGET_NS 250000000ull /* timed blocks per backend: about a quarter second */
#define PACE_LIMIT_NS 20000000ull     /* longer periods run back to back: no idle to wake from */

enum gf_backend_kind gf_cost_live_choose(double cpu_p99_us, double gpu_p99_us)
{
	if (gpu_p99_us < 0)
		return GF_BACKEND_CPU;
	if (cpu_p99_us < 0)
		return GF_BACKEND_CUDA;
	return gpu_p99_us < GF_COST_LIVE_GPU_MARGIN * cpu_p99_us ? GF_BACKEND_CUDA : GF_BACKEND_CPU;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Blocks timed: enough for a 99th percentile, within the budget. */
static uint32_t timed_blocks(uint64_t period_ns)
{
	uint64_t n = period_ns ? TIMING_BUDGET_NS / period_ns : MAX_TIMED_BLOCKS;
	return n < 16 ? 16 : n > MAX_TIMED_BLOCKS ? MAX_TIMED_BLOCKS : (uint32_t)n;
}

/* One backend being timed: its instance and its block times. */
struct timed {
	const struct gf_backend_ops *ops;
	void *bi;
	int err;
	double us[MAX_TIMED_BLOCKS];
};

static void timed_open(struct timed *t, const struct gf_backend_ops *ops, const struct gf_engine_params *p,
		       const struct gf_filter_set *fs, char *why, size_t why_len)
{
	struct gf_errbuf eb = {{0}};
	t->ops = ops;
	t->bi = NULL;
	t->err = ops->check_memory ? ops->check_memory(p, fs->taps, &eb) : 0;
	if (!t->err)
		t->err = ops->create(p, fs, &t->bi, &eb);
	if (t->err)
		snprintf(why, why_len, "%.150s", eb.msg[0] ? eb.msg : gf_strerror(t->err));
}

/* One block through @p t (unless it failed before); its time goes to slot @p i once warm. */
static void timed_block(struct timed *t, const float *in, float *out, uint32_t frames, uint32_t b)
{
	if (t->err)
		return;
	uint64_t t0 = gf_now_ns();
	t->err = t->ops->submit(t->bi, in, frames);
	if (!t->err)
		t->err = t->ops->finish(t->bi, out, t0 + GF_BACKEND_SYNC_DEADLINE_NS);
	if (b >= WARMUP_BLOCKS)
		t->us[b - WARMUP_BLOCKS] = (double)(gf_now_ns() - t0) * 1e-3;
}

/* The 99th percentile of @p t's block times (us), or -1 if it failed; frees its instance. */
static double timed_close(struct timed *t, uint32_t blocks, char *why, size_t why_len)
{
	if (t->bi &&
	    t->err != GF_E_TIMEOUT) /* a missed deadline may leave work in flight: never destroy that */
		t->ops->destroy(t->bi);
	if (t->err) {
		if (!why[0])
			snprintf(why, why_len, "%s: %s", t->ops->name, gf_strerror(t->err));
		return -1.0;
	}
	qsort(t->us, blocks, sizeof(t->us[0]), cmp_double);
	return t->us[(blocks * 99 + 99) / 100 - 1];
}

/* Time both backends on max_block frames of noise, block by block in turn
 * (so that whatever else loads the machine weighs on both alike), paced at
 * @p period_ns. Fills the 99th percentiles (-1: that backend cannot run it). */
static void time_both(const struct gf_engine_params *p, const struct gf_filter_set *fs, uint64_t period_ns,
		      double *cpu_us, double *gpu_us, char *why, size_t why_len)
{
	struct timed t[2];
	char err[2][160] = {"", ""};
	timed_open(&t[1], &gf_cuda_backend, p, fs, err[1], sizeof(err[1]));
	if (t[1].err) /* no GPU instance for this shape: nothing to weigh the CPU against */
		t[0] = (struct timed){.ops = &gf_cpu_backend, .err = GF_E_UNSUPPORTED};
	else
		timed_open(&t[0], &gf_cpu_backend, p, fs, err[0], sizeof(err[0]));
	size_t n = (size_t)p->max_block * p->channels;
	float *buf = calloc(2 * n, sizeof(float));
	uint32_t blocks = timed_blocks(period_ns), rng = 0x12345678u;
	for (size_t i = 0; buf && i < n; i++) {
		rng = rng * 1664525u + 1013904223u;
		buf[i] = (float)(rng >> 8) * (1.0f / 16777216.0f) - 0.5f;
	}
	uint64_t next = gf_now_ns();
	int pace = period_ns <= PACE_LIMIT_NS;
	for (uint32_t b = 0; buf && b < WARMUP_BLOCKS + blocks && !(t[0].err && t[1].err); b++) {
		if (pace)
			gf_sleep_until_ns(next += period_ns);
		for (int k = 0; k < 2; k++)
			timed_block(&t[k], buf, buf + n, p->max_block, b);
	}
	free(buf);
	*gpu_us = timed_close(&t[1], blocks, err[1], sizeof(err[1]));
	*cpu_us = timed_close(&t[0], blocks, err[0], sizeof(err[0]));
	snprintf(why, why_len, "%s", *gpu_us < 0 ? err[1] : *cpu_us < 0 ? err[0] : "");
}

/* ---- one answer per shape and process --------------------------------------- */

struct live_shape {
	uint32_t channels, max_block, taps, max_taps, rate;
	int gpu_index;
	enum gf_algo algo;
};

struct live_answer {
	struct live_shape shape;
	enum gf_backend_kind pick;
	char why[200];
};

static pthread_mutex_t g_answers_mu = PTHREAD_MUTEX_INITIALIZER;
static struct live_answer g_answers[16];
static unsigned g_n_answers;

static int answer_lookup(const struct live_shape *s, enum gf_backend_kind *pick, char *why, size_t len)
{
	int found = 0;
	pthread_mutex_lock(&g_answers_mu);
	for (unsigned i = 0; i < g_n_answers && !found; i++)
		if (memcmp(&g_answers[i].shape, s, sizeof(*s)) == 0) {
			*pick = g_answers[i].pick;
			snprintf(why, len, "%s (measured earlier)", g_answers[i].why);
			found = 1;
		}
	pthread_mutex_unlock(&g_answers_mu);
	return found;
}

static void answer_store(const struct live_shape *s, enum gf_backend_kind pick, const char *why)
{
	pthread_mutex_lock(&g_answers_mu);
	struct live_answer *a = &g_answers[g_n_answers % (sizeof(g_answers) / sizeof(g_answers[0]))];
	g_n_answers++;
	a->shape = *s;
	a->pick = pick;
	snprintf(a->why, sizeof(a->why), "%s", why);
	pthread_mutex_unlock(&g_answers_mu);
}

/* The CPU's modelled time for one block of @p taps, in us. */
static double cpu_model_us(const struct gf_engine_params *p, uint32_t taps)
{
	return gf_cost_cpu_ns_per_sample(taps, p->channels, p->max_block, p->algo) * p->max_block *
	       p->channels * 1e-3;
}

/* A mixer is timed as its paths, the way the GPU runs it: a bound on the CPU, which transforms
 * each input once rather than each path. */
static enum gf_backend_kind pick_mixer(const struct gf_engine_params *p, const struct gf_filter_set *fs,
				       char *why, size_t why_len)
{
	struct gf_engine_params pp = *p;
	struct gf_filter_set *plain;
	pp.channels = fs->channels;
	if (gf_filter_set_paths_plain(&plain, fs)) {
		snprintf(why, why_len, "cpu: no memory to time the mixer's %u paths", fs->channels);
		return GF_BACKEND_CPU;
	}
	enum gf_backend_kind k = gf_cost_live_pick(&pp, plain, why, why_len);
	gf_filter_set_free(plain);
	return k;
}

enum gf_backend_kind gf_cost_live_pick(const struct gf_engine_params *p, const struct gf_filter_set *fs,
				       char *why, size_t why_len)
{
	if (gf_filter_set_is_mixer(fs))
		return pick_mixer(p, fs, why, why_len);
	struct live_shape s = {p->channels,  p->max_block, fs->taps, p->max_taps,
			       p->live_rate, p->gpu_index, p->algo};
	enum gf_backend_kind pick;
	if (answer_lookup(&s, &pick, why, why_len))
		return pick;
	uint64_t period_ns = (uint64_t)p->max_block * 1000000000u / p->live_rate;
	double period_us = (double)period_ns * 1e-3;
	/* A filter the engine may be swapped to (max_taps) must fit the CPU too:
	 * a swap keeps the backend. The model's cost against a fraction of the period. */
	double worst = cpu_model_us(p, p->max_taps > fs->taps ? p->max_taps : fs->taps);
	if (worst > GF_COST_LIVE_CPU_SHARE * period_us) {
		pick = GF_BACKEND_CUDA;
		snprintf(why, why_len,
			 "cuda: the CPU's model gives %.0f us a block at %u taps, over %.0f%% of the "
			 "%.0f us period",
			 worst, p->max_taps > fs->taps ? p->max_taps : fs->taps,
			 100.0 * GF_COST_LIVE_CPU_SHARE, period_us);
	} else {
		double cpu, gpu;
		char err[200];
		time_both(p, fs, period_ns, &cpu, &gpu, err, sizeof(err));
		pick = gf_cost_live_choose(cpu, gpu);
		if (gpu < 0 || cpu < 0)
			snprintf(why, why_len, "%s: the %s cannot run this stream: %s",
				 gpu < 0 ? "cpu" : "cuda", gpu < 0 ? "GPU" : "CPU", err);
		else
			snprintf(why, why_len, "%s: p99 of a %u-frame block: CPU %.1f us, CUDA %.1f us",
				 pick == GF_BACKEND_CPU ? "cpu" : "cuda", p->max_block, cpu, gpu);
	}
	answer_store(&s, pick, why);
	return pick;
}
