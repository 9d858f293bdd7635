/*
 * The neural stage (neural_bank.h) on a real GPU: gpufir's own DeepFilterNet3
 * forward through the CUDA module, against the same stage on the CPU forward,
 * on the fixed inputs (test_dfn_inputs.h: 6 s, channel c input c % 3 at its
 * own gain), CH channels, the attenuation limit set to 12 dB live half-way:
 * - offline (no deadline): every channel within test_gpu_dfn's bound of the
 *   CPU stage (the difference at least MIN_SNR_DB below the output, no frame
 *   off by more than MAX_ABS); on the GPU throughout, nothing late or failed;
 * - live: calls of a 256-frame block, each with the daemon's deadline (two
 *   block periods): no call late, the output the offline GPU stage's, bit for
 *   bit; the calls' times printed;
 * - a call given a deadline already past, across a hop's end: late, counted,
 *   still on the GPU, no failure; the hop collected at the next call, whose
 *   frames, and every later one, are the offline GPU stage's again.
 * Exits 77 without a usable GPU or without the converted model.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "gpu.h"
#include "log.h"
#include "neural_bank.h"
#include "test_dfn_inputs.h"
#include "testutil.h"

#define CH 4u
#define CALL 256u
#define DEADLINE_NS (2ull * CALL * 1000000000ull / GF_NEURAL_RATE)
/* test_gpu_dfn's bound (docs/neural.md, "Accuracy"): the GPU forward against the CPU's. */
#define MIN_SNR_DB 50.0
#define MAX_ABS 1e-4

static char model[4200];
static float *x;
static uint32_t frames;

static float gain_of(uint32_t c)
{
	return powf(10.0f, (-24.0f + 30.0f * (float)c / (CH - 1)) / 20.0f);
}

static void load_inputs(void)
{
	int n;
	size_t hops;
	float *in = dfn_test_inputs(&n, &hops);
	CHECK(in && n == 3);
	frames = (uint32_t)(hops * GF_NEURAL_HOP);
	x = malloc((size_t)frames * CH * sizeof(float));
	CHECK(x);
	for (uint32_t i = 0; i < frames; i++)
		for (uint32_t c = 0; c < CH; c++)
			x[(size_t)i * CH + c] = gain_of(c) * in[(size_t)(c % 3) * frames + i];
	free(in);
}

static struct gf_neural_bank *stage(int gpu)
{
	static const uint8_t active[CH] = {1, 1, 1, 1};
	struct gf_neural_params p = {.model = model, .atten_lim_db = 100.0f};
	struct gf_neural_bank_opts o = {.ops = &gf_neural_dfn_ops, .gpu = gpu};
	struct gf_neural_bank *b;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_neural_bank_new(active, CH, GF_NEURAL_RATE, &p, &o, &b, &eb), &eb);
	if (gf_neural_bank_on_gpu(b) != gpu)
		printf("the stage asked for the GPU runs on %s (the log above says why)\n",
		       gf_neural_bank_backend(b));
	CHECK(gf_neural_bank_on_gpu(b) == gpu);
	return b;
}

/* Where the attenuation limit becomes 12 dB: the start of a call of 4096 frames and of 256 alike, so
 * that the same hops take it whatever the calls. */
static uint32_t lim_at(void)
{
	return frames / 2 / 4096 * 4096;
}

/* The input through @p b in calls of @p per frames (a divisor of 4096), each with a deadline
 * @p wait_ns ahead (0: none); the attenuation limit 12 dB from lim_at(). Each call's time into @p ms. */
static float *through(struct gf_neural_bank *b, uint32_t per, uint64_t wait_ns, double *ms)
{
	float *y = malloc((size_t)frames * CH * sizeof(float));
	CHECK(y);
	memcpy(y, x, (size_t)frames * CH * sizeof(float));
	for (uint32_t at = 0, k = 0; at < frames; at += per, k++) {
		uint32_t n = frames - at < per ? frames - at : per;
		if (at == lim_at())
			CHECK(gf_neural_bank_set_atten_lim(b, 12.0) == 0);
		uint64_t t0 = gf_now_ns();
		gf_neural_bank_process_by(b, y + (size_t)at * CH, n, wait_ns ? t0 + wait_ns : 0);
		if (ms)
			ms[k] = 1e-6 * (double)(gf_now_ns() - t0);
	}
	return y;
}

/* Every channel of @p got within the bound of @p want; the worst figures printed. */
static void within_bound(const char *what, const float *want, const float *got)
{
	double worst = INFINITY, worst_mx = 0.0;
	for (uint32_t c = 0; c < CH; c++) {
		double es = 0.0, ed = 0.0, mx = 0.0;
		for (uint32_t i = 0; i < frames; i++) {
			double w = want[(size_t)i * CH + c], d = got[(size_t)i * CH + c] - w;
			es += w * w;
			ed += d * d;
			mx = fabs(d) > mx ? fabs(d) : mx;
		}
		double snr = ed > 0.0 ? 10.0 * log10(es / ed) : INFINITY;
		printf("  %s, channel %u (input %u, %.1f dB): difference %.1f dB below the output, max "
		       "%.3g\n",
		       what, c, c % 3, 20.0 * log10(gain_of(c)), snr, mx);
		CHECK(snr >= MIN_SNR_DB && mx <= MAX_ABS);
		worst = snr < worst ? snr : worst;
		worst_mx = mx > worst_mx ? mx : worst_mx;
	}
	printf("%s: %u channels, %u frames: worst %.1f dB, max |diff| %.3g (bound %.0f dB, %.0e)\n", what, CH,
	       frames, worst, worst_mx, MIN_SNR_DB, MAX_ABS);
}

/* Frames of [from, to) where @p got is not @p want: the same GPU work on the same input gives the same
 * bits (no atomics in cuda/dfn), but a margin far below any missing or misplaced hop costs nothing. */
static uint32_t frames_off(const float *want, const float *got, uint32_t from, uint32_t to)
{
	uint32_t off = 0;
	for (uint32_t i = from; i < to; i++) {
		int bad = 0;
		for (uint32_t c = 0; c < CH; c++)
			bad |= !(fabsf(got[(size_t)i * CH + c] - want[(size_t)i * CH + c]) <= 1e-6f);
		off += bad;
	}
	return off;
}

static int cmp_double(const void *a, const void *b)
{
	double x1 = *(const double *)a, x2 = *(const double *)b;
	return (x1 > x2) - (x1 < x2);
}

static void live_case(const float *offline)
{
	struct gf_neural_bank *b = stage(1);
	uint32_t calls = (frames + CALL - 1) / CALL;
	double *ms = calloc(calls, sizeof(double));
	CHECK(ms);
	float *y = through(b, CALL, DEADLINE_NS, ms);
	qsort(ms, calls, sizeof(double), cmp_double);
	uint32_t off = frames_off(offline, y, 0, frames);
	printf("live, %u-frame calls with a %.2f ms deadline: %u calls, time per call median %.3f ms, 99%% "
	       "%.3f ms, max %.3f ms; late %llu, dropped %llu, GPU failures %llu; %u frames differ from "
	       "offline\n",
	       CALL, 1e-6 * (double)DEADLINE_NS, calls, ms[calls / 2], ms[calls * 99 / 100], ms[calls - 1],
	       (unsigned long long)gf_neural_bank_late(b), (unsigned long long)gf_neural_bank_dropped(b),
	       (unsigned long long)gf_neural_bank_gpu_failures(b), off);
	CHECK(gf_neural_bank_late(b) == 0 && gf_neural_bank_gpu_failures(b) == 0 && gf_neural_bank_on_gpu(b));
	CHECK(off == 0);
	free(ms);
	free(y);
	gf_neural_bank_free(b);
}

/* Call 376 (frames 96256 to 96512, across the end of hop 200 at 96480) with a deadline already past:
 * late, its last 32 frames muted; then calls as live. */
static void late_case(const float *offline)
{
	struct gf_neural_bank *b = stage(1);
	float *y = malloc((size_t)frames * CH * sizeof(float));
	CHECK(y);
	memcpy(y, x, (size_t)frames * CH * sizeof(float));
	const uint32_t H = GF_NEURAL_HOP, late_at = 376 * CALL;
	CHECK(late_at < 201 * H && 201 * H < late_at + CALL && late_at + CALL < lim_at());
	for (uint32_t at = 0; at < late_at; at += CALL)
		gf_neural_bank_process_by(b, y + (size_t)at * CH, CALL, gf_now_ns() + DEADLINE_NS);
	gf_neural_bank_process_by(b, y + (size_t)late_at * CH, CALL,
				  1); /* past: one look, the hop in flight */
	CHECK(gf_neural_bank_late(b) == 1);
	usleep(20000); /* back meanwhile */
	for (uint32_t at = late_at + CALL; at < frames; at += CALL) {
		uint32_t n = frames - at < CALL ? frames - at : CALL;
		if (at == lim_at())
			CHECK(gf_neural_bank_set_atten_lim(b, 12.0) == 0);
		gf_neural_bank_process_by(b, y + (size_t)at * CH, n, gf_now_ns() + DEADLINE_NS);
	}
	uint32_t before = frames_off(offline, y, 0, 201 * H),
		 muted = frames_off(offline, y, 201 * H, late_at + CALL);
	uint32_t after = frames_off(offline, y, late_at + CALL, frames);
	printf("a deadline already past at the end of hop 200: late %llu, GPU failures %llu, on the GPU %d; "
	       "frames off: %u before, %u of the %u muted, %u after\n",
	       (unsigned long long)gf_neural_bank_late(b), (unsigned long long)gf_neural_bank_gpu_failures(b),
	       gf_neural_bank_on_gpu(b), before, muted, late_at + CALL - 201 * H, after);
	CHECK(gf_neural_bank_late(b) == 1 && gf_neural_bank_gpu_failures(b) == 0 && gf_neural_bank_on_gpu(b));
	CHECK(before == 0 && after == 0 && muted <= late_at + CALL - 201 * H);
	free(y);
	gf_neural_bank_free(b);
}

int main(void)
{
	char desc[256];
	if (gf_cuda_probe(0, desc, sizeof(desc)) != 0) {
		printf("skipped: no usable GPU (%s)\n", desc);
		return GF_TEST_SKIP;
	}
	const char *env = getenv("GPUFIR_DFN_MODEL");
	snprintf(model, sizeof(model), "%s", env && *env ? env : "");
	if (!model[0])
		snprintf(model, sizeof(model), "%s/%s", dfn_test_dir(), GF_NEURAL_DFN_FILE);
	if (access(model, R_OK) != 0) {
		printf("skipped: no converted model at %s (docs/neural.md)\n", model);
		return GF_TEST_SKIP;
	}
	printf("GPU: %s\n", desc);
	gf_log_set_level(GF_LOG_INFO); /* the stage says at info level why it would not take the GPU */
	load_inputs();
	struct gf_neural_bank *cpu = stage(0), *gpu = stage(1);
	float *yc = through(cpu, 4096, 0, NULL), *yg = through(gpu, 4096, 0, NULL);
	printf("offline: the GPU stage (%s): late %llu, GPU failures %llu\n", gf_neural_bank_backend(gpu),
	       (unsigned long long)gf_neural_bank_late(gpu),
	       (unsigned long long)gf_neural_bank_gpu_failures(gpu));
	CHECK(gf_neural_bank_on_gpu(gpu) && gf_neural_bank_late(gpu) == 0 &&
	      gf_neural_bank_gpu_failures(gpu) == 0);
	CHECK(gf_neural_bank_latency(gpu) == gf_neural_bank_latency(cpu));
	within_bound("offline, GPU stage against CPU stage", yc, yg);
	gf_neural_bank_free(cpu);
	gf_neural_bank_free(gpu);
	live_case(yg);
	late_case(yg);
	free(yc);
	free(yg);
	free(x);
	printf("ok\n");
	return 0;
}
