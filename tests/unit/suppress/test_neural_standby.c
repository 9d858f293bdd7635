/*
 * The neural stage's switch from the GPU to its CPU standby with the real
 * model (gpufir's CPU forward, gf_neural_dfn_ops), no GPU needed: a "GPU"
 * that runs the same forward behind submit/collect fails on hop FAIL_HOP,
 * and the stage's output is held against a stage on the CPU forward alone
 * on the same input (the fixed inputs 0 and 1, noisy speech, 2 s; the
 * switch at 1 s):
 * - before the switch: bit for bit the same;
 * - from the failed hop on: the standby, restarted on the hops the stage
 *   kept, plays the model's output at once: the hops a cold standby would
 *   play as silence are within LOUD_DB of the CPU stage's level; the
 *   difference in each second after the switch is printed: the restarted
 *   state (its normalisation above all, which starts from its initial
 *   values) takes seconds to agree with the one that ran all along.
 * Without the restart on the kept hops the standby plays its start-up, two
 * hops of silence. Skips (77) without the converted model.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "neural_bank.h"
#include "test_dfn_inputs.h"
#include "testutil.h"

#define CH 2u
#define HOP GF_NEURAL_HOP
#define FAIL_HOP 100u
/* The seconds after the switch compared (the CPU forward is slow under the sanitizers). */
#define AFTER_S 1u
/* The hops after the switch that a standby starting cold would play as silence (its latency: the
 * model's two hops of lookahead), and how far below the CPU stage's level they may be. A restarted
 * model attenuates more than one that ran all along for a while (on these inputs up to 16 dB on
 * such hops, switching at other times); a cold start's are 36 to 51 dB below. */
#define COLD_HOPS 2u
#define LOUD_DB 30.0

/* ---- a "GPU": the CPU forward behind submit and collect, failing on one submit ---- */

struct wrap {
	void *cpu; /* gf_neural_dfn_ops' instance */
	uint32_t n, submits;
	float *out;
	int pending;
};

static int w_create(const struct gf_neural_params *p, uint32_t channels, void **out, struct gf_errbuf *eb)
{
	struct wrap *w = calloc(1, sizeof(*w));
	CHECK(w && (w->out = calloc(channels, HOP * sizeof(float))));
	w->n = channels;
	int r = gf_neural_dfn_ops.create(p, channels, &w->cpu, eb);
	if (r) {
		free(w->out);
		free(w);
		return r;
	}
	*out = w;
	return 0;
}

static void w_free(void *p)
{
	struct wrap *w = p;
	if (w) {
		gf_neural_dfn_ops.free(w->cpu);
		free(w->out);
		free(w);
	}
}

static void w_process(void *p, uint32_t first, uint32_t n, const float *in, float *out)
{
	gf_neural_dfn_ops.process(((struct wrap *)p)->cpu, first, n, in, out);
}

static void w_atten(void *p, uint32_t first, uint32_t n, float db)
{
	gf_neural_dfn_ops.set_atten_lim(((struct wrap *)p)->cpu, first, n, db);
}

static uint32_t w_latency(const void *p)
{
	return gf_neural_dfn_ops.latency(((const struct wrap *)p)->cpu);
}

static int w_reset(void *p, uint32_t first, uint32_t n)
{
	((struct wrap *)p)->pending = 0;
	return gf_neural_dfn_ops.reset(((struct wrap *)p)->cpu, first, n);
}

static int w_submit(void *p, const float *in)
{
	struct wrap *w = p;
	if (++w->submits == FAIL_HOP + 1)
		return GF_E_CUDA;
	gf_neural_dfn_ops.process(w->cpu, 0, w->n, in, w->out);
	w->pending = 1;
	return 0;
}

static int w_collect(void *p, float *out, uint64_t deadline_ns)
{
	struct wrap *w = p;
	(void)deadline_ns;
	if (!w->pending)
		return GF_E_INVAL;
	memcpy(out, w->out, (size_t)w->n * HOP * sizeof(float));
	w->pending = 0;
	return 0;
}

static const char *w_error(const void *p)
{
	(void)p;
	return "failed as the test asked";
}

static const struct gf_neural_ops wrap_ops = {
	.name = "the CPU forward as a GPU",
	.create = w_create,
	.process = w_process,
	.set_atten_lim = w_atten,
	.latency = w_latency,
	.free = w_free,
	.reset = w_reset,
	.submit = w_submit,
	.collect = w_collect,
	.error = w_error,
};

/* ---- the stages ---------------------------------------------------------------- */

static float *through(int gpu, const char *model, const float *x, uint32_t frames)
{
	static const uint8_t active[CH] = {1, 1};
	struct gf_neural_params p = {.model = model, .atten_lim_db = 100.0f};
	struct gf_neural_bank_opts o = {.ops = &gf_neural_dfn_ops, .gpu = gpu, .gpu_ops = &wrap_ops};
	struct gf_neural_bank *b;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_neural_bank_new(active, CH, GF_NEURAL_RATE, &p, &o, &b, &eb), &eb);
	CHECK(gf_neural_bank_on_gpu(b) == gpu);
	float *y = malloc((size_t)frames * CH * sizeof(float));
	CHECK(y);
	memcpy(y, x, (size_t)frames * CH * sizeof(float));
	for (uint32_t at = 0; at < frames; at += 256) {
		uint32_t n = frames - at < 256 ? frames - at : 256;
		gf_neural_bank_process_by(b, y + (size_t)at * CH, n, 0);
	}
	if (gpu)
		CHECK(gf_neural_bank_gpu_failures(b) == 1 && !gf_neural_bank_on_gpu(b) &&
		      gf_neural_bank_late(b) == 0);
	gf_neural_bank_free(b);
	return y;
}

static double energy(const float *y, uint32_t from, uint32_t to, uint32_t c)
{
	double e = 0.0;
	for (uint32_t i = from; i < to; i++)
		e += (double)y[(size_t)i * CH + c] * y[(size_t)i * CH + c];
	return e;
}

int main(void)
{
	char model[4200];
	const char *env = getenv("GPUFIR_DFN_MODEL");
	snprintf(model, sizeof(model), "%s", env && *env ? env : "");
	if (!model[0])
		snprintf(model, sizeof(model), "%s/%s", dfn_test_dir(), GF_NEURAL_DFN_FILE);
	struct dfn_model *probe = dfn_test_model(); /* exits 77 without the model */
	dfn_model_free(probe);
	int n;
	size_t hops;
	float *in = dfn_test_inputs(&n, &hops);
	uint32_t all = (uint32_t)(hops * HOP), frames = (FAIL_HOP + 1) * HOP + AFTER_S * GF_NEURAL_RATE;
	CHECK(frames <= all);
	float *x = malloc((size_t)frames * CH * sizeof(float));
	CHECK(x);
	for (uint32_t i = 0; i < frames; i++)
		for (uint32_t c = 0; c < CH; c++)
			x[(size_t)i * CH + c] = in[(size_t)c * all + i];
	free(in);
	float *ya = through(1, model, x, frames), *yb = through(0, model, x, frames);
	/* the failed hop is due at the end of hop FAIL_HOP's frames; its output plays over the next */
	uint32_t sw = (FAIL_HOP + 1) * HOP;
	CHECK(memcmp(ya, yb, (size_t)sw * CH * sizeof(float)) == 0);
	int silent = 0;
	for (uint32_t c = 0; c < CH; c++) {
		for (uint32_t h = 0; h < COLD_HOPS; h++) {
			uint32_t from = sw + h * HOP, to = from + HOP;
			double ea = energy(ya, from, to, c), eb = energy(yb, from, to, c);
			printf("channel %u, hop %u after the switch: %.1f dB against the CPU stage's level\n",
			       c, h, 10.0 * log10((ea + 1e-30) / (eb + 1e-30)));
			silent |= eb > 1e-6 && ea < eb * pow(10.0, -LOUD_DB / 10.0);
		}
		printf("channel %u: the standby against the CPU stage, the difference below its output in "
		       "the "
		       "seconds after the switch:",
		       c);
		for (uint32_t k = 0; k < AFTER_S; k++) {
			uint32_t from = sw + k * GF_NEURAL_RATE, to = from + GF_NEURAL_RATE;
			double e = energy(yb, from, to, c), d = 0.0;
			for (uint32_t i = from; i < to; i++) {
				double v = (double)ya[(size_t)i * CH + c] - yb[(size_t)i * CH + c];
				d += v * v;
			}
			printf(" %.1f dB", 10.0 * log10(e / (d + 1e-30)));
		}
		printf("\n");
	}
	printf("switch at hop %u: the first %u hops after it within %.0f dB of the CPU stage's level: %s\n",
	       FAIL_HOP, COLD_HOPS, LOUD_DB, silent ? "FAIL" : "ok");
	CHECK(!silent);
	free(ya);
	free(yb);
	free(x);
	return 0;
}
