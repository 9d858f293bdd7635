/*
 * The mixer's cost on the CPU backend: one mixer engine (each input
 * transformed once, each output once, the paths summed in the frequency
 * domain) against running each path separately, the way it is done
 * without a mixer: the inputs copied to one channel per path, one plain
 * engine over those P channels (a transform in and out per path), and the
 * paths summed per output. Both measured on the same calls: microseconds
 * per call (mean and 99.9th percentile) and the ratio of the means.
 *
 * usage: bench_mixer [seconds per case, default 1]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "engine.h"
#include "log.h"
#include "timing.h"

struct shape {
	const char *name;
	uint32_t inputs, outputs, paths;
	uint32_t in[16], out[16];
};

static const struct shape shapes[] = {
	{"2->4 crossover", 2, 4, 4, {0, 0, 1, 1}, {0, 1, 2, 3}},
	{"2->6 3-way", 2, 6, 6, {0, 0, 0, 1, 1, 1}, {0, 1, 2, 3, 4, 5}},
	{"2->2 M/S", 2, 2, 4, {0, 1, 0, 1}, {0, 0, 1, 1}},
	{"4->4 matrix",
	 4,
	 4,
	 16,
	 {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3},
	 {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}},
};

#define MAX_CALLS (1u << 20)

/* The two ways of one case, called in turn on the same input. */
struct pair {
	const struct shape *s;
	struct gf_engine *mix, *sep;
	float *x, *y, *xs, *ys; /* mixer in/out; separate: in (one channel per path) and out */
	uint32_t block;
};

static void run_mixer(struct pair *q)
{
	gf_engine_process(q->mix, q->x, q->y, q->block);
}

static void run_separate(struct pair *q)
{
	const struct shape *s = q->s;
	for (uint32_t i = 0; i < q->block; i++)
		for (uint32_t p = 0; p < s->paths; p++)
			q->xs[(size_t)i * s->paths + p] = q->x[(size_t)i * s->inputs + s->in[p]];
	gf_engine_process(q->sep, q->xs, q->ys, q->block);
	memset(q->y, 0, (size_t)q->block * s->outputs * sizeof(float));
	for (uint32_t i = 0; i < q->block; i++)
		for (uint32_t p = 0; p < s->paths; p++)
			q->y[(size_t)i * s->outputs + s->out[p]] += q->ys[(size_t)i * s->paths + p];
}

static int make(struct pair *q, const struct shape *s, uint32_t taps, uint32_t block)
{
	memset(q, 0, sizeof(*q));
	q->s = s;
	q->block = block;
	struct gf_filter_set *mix, *sep;
	if (gf_filter_set_new_mixer(&mix, s->inputs, s->outputs, s->paths, taps) ||
	    gf_filter_set_new(&sep, s->paths, taps))
		return -1;
	for (uint32_t p = 0; p < s->paths; p++) {
		mix->path_in[p] = s->in[p];
		mix->path_out[p] = s->out[p];
	}
	for (size_t i = 0; i < (size_t)s->paths * taps; i++)
		mix->coeffs[i] = sep->coeffs[i] = gf_bench_rnd() / (float)(1 + i % taps);
	struct gf_engine_params p = {
		.backend = GF_BACKEND_CPU, .algo = GF_ALGO_FFT, .channels = s->inputs, .max_block = block};
	struct gf_errbuf eb = {{0}};
	int err = gf_engine_new(&q->mix, &p, mix, &eb);
	p.channels = s->paths;
	if (!err)
		err = gf_engine_new(&q->sep, &p, sep, &eb);
	gf_filter_set_free(mix);
	gf_filter_set_free(sep);
	size_t wide = s->paths > s->outputs ? s->paths : s->outputs;
	q->x = malloc((size_t)block * s->inputs * sizeof(float));
	q->y = malloc((size_t)block * wide * sizeof(float));
	q->xs = malloc((size_t)block * s->paths * sizeof(float));
	q->ys = malloc((size_t)block * s->paths * sizeof(float));
	if (err || !q->x || !q->y || !q->xs || !q->ys) {
		fprintf(stderr, "bench_mixer: %s\n", eb.msg[0] ? eb.msg : "out of memory");
		return -1;
	}
	for (size_t i = 0; i < (size_t)block * s->inputs; i++)
		q->x[i] = gf_bench_rnd();
	return 0;
}

static void drop(struct pair *q)
{
	gf_engine_free(q->mix);
	gf_engine_free(q->sep);
	free(q->x);
	free(q->y);
	free(q->xs);
	free(q->ys);
}

/* Alternate calls of the two ways for @p seconds; mean and p99.9 of each, in us. */
static void bench_case(struct pair *q, double seconds, double mean[2], double p999[2])
{
	struct gf_bench_calls t[2];
	int ok = !gf_bench_calls_init(&t[0], MAX_CALLS) & !gf_bench_calls_init(&t[1], MAX_CALLS);
	for (int k = 0; k < 20; k++) { /* warm up */
		run_mixer(q);
		run_separate(q);
	}
	double t0 = gf_now_s();
	while (ok && t[0].n < MAX_CALLS && gf_now_s() - t0 < seconds) {
		for (int w = 0; w < 2; w++) {
			double a = gf_now_s();
			if (w == 0)
				run_mixer(q);
			else
				run_separate(q);
			gf_bench_calls_add(&t[w], (gf_now_s() - a) * 1e6);
		}
	}
	for (int w = 0; w < 2; w++) {
		mean[w] = gf_bench_calls_mean(&t[w]);
		if (t[w].n)
			p999[w] = gf_bench_calls_p999(&t[w]);
		gf_bench_calls_free(&t[w]);
	}
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	if (!(seconds > 0.0)) {
		fprintf(stderr, "usage: bench_mixer [seconds per case]\n");
		return 2;
	}
	gf_log_set_level(GF_LOG_WARN);
	static const uint32_t taps[] = {4095, 65535};
	static const uint32_t blocks[] = {128, 65536};
	printf("| shape | paths | taps | block | mixer us/call (p99.9) | separate us/call (p99.9) | "
	       "separate / mixer |\n| --- | --- | --- | --- | --- | --- | --- |\n");
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		for (size_t t = 0; t < 2; t++)
			for (size_t b = 0; b < 2; b++) {
				struct pair q;
				if (make(&q, &shapes[s], taps[t], blocks[b])) {
					drop(&q);
					return 1;
				}
				double mean[2] = {0, 0}, p999[2] = {0, 0};
				bench_case(&q, seconds, mean, p999);
				printf("| %s | %u | %u | %u | %.1f (%.1f) | %.1f (%.1f) | %.2f |\n",
				       shapes[s].name, shapes[s].paths, taps[t], blocks[b], mean[0], p999[0],
				       mean[1], p999[1], mean[0] > 0 ? mean[1] / mean[0] : 0.0);
				fflush(stdout);
				drop(&q);
			}
	return 0;
}
