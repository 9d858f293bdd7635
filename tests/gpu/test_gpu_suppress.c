/*
 * The noise suppressor on the GPU (suppress_gpu.h) against the CPU one
 * (suppress.h): for 1, 2, 64 and 256 channels at 16 and 48 kHz, speech-like
 * signals in noise (a NaN and an Inf in channel 0: missing input, over which
 * both hold the state of every channel), cut into calls of random
 * sizes, different on each side, the GPU's output equals the CPU's within
 * TOL_REL_L2 per channel; with a noise sample too, and with the zero-phase
 * high-pass (highpass_hz: its table the same bits on both sides), with the
 * live floor switched to bypass and to another depth mid-stream, and with a
 * mains hum set handed over halfway (the deeper floor in its bins, sent up
 * with a hop: suppress_hum.h), and after half a second of digital silence
 * (an estimate far under the sound that follows, learnt alike: suppress.h); 0 dB of
 * reduction gives the input back, latency() frames late; bad parameters are refused.
 *
 * Why TOL_REL_L2 holds: both run the same float operations in the same order
 * (cu_suppress.cu), from the same window, constants and noise seed; only cuFFT's
 * rounding differs from FFTW's (about 1e-7 of a frame's level). Every step of
 * the recursion is continuous in its inputs (min, max and the clamped ramps
 * included; the branches go by the frame count, the same on both sides), so
 * that difference is carried, not amplified into a flipped decision: the
 * measured error stays near 1e-6 and 1e-4 leaves a wide margin, while any
 * real difference (a step out of order, a wrong bin or frame) is of order one.
 *
 * Skips (77) where no CUDA device is usable. GPUFIR_GPU_TEST_QUICK=1 runs 2 and
 * 64 channels for one second (for compute-sanitizer).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suppress.h"
#include "suppress_hum.h"
#include "suppressutil.h"
#include "testutil.h"

#ifdef GPUFIR_HAVE_CUDA
#include "suppress_gpu.h"

#define TOL_REL_L2 1e-4
#define VOICES 4 /* distinct speech-like signals, mixed differently into every channel */

static uint64_t rng;
static double worst_rel, worst_abs; /* over every case */

static double lead_s; /* what make_input starts with: seconds of digital silence on every channel */

/* @p frames of @p C interleaved channels, then @p pad frames of silence (to flush the latency):
 * each channel a voice at its own level in white noise at its own level, after lead_s of zeros. */
static float *make_input(uint32_t C, uint32_t frames, uint32_t pad, uint32_t rate)
{
	float *voice[VOICES];
	for (int v = 0; v < VOICES; v++)
		voice[v] = gf_test_speech_like(frames, rate, &rng);
	float *x = calloc((size_t)(frames + pad) * C, sizeof(float));
	for (uint32_t c = 0; c < C; c++) {
		float g = 0.2f + 2.0f * gf_test_randf(&rng), nl = 0.002f + 0.1f * gf_test_randf(&rng);
		for (uint32_t i = 0; i < frames; i++)
			x[(size_t)i * C + c] =
				g * voice[c % VOICES][i] + nl * (2.0f * gf_test_randf(&rng) - 1.0f);
	}
	memset(x, 0, (size_t)(lead_s * rate) * C * sizeof(float)); /* learnt, then the sound after it */
	x[(size_t)(frames / 3) * C] = NAN; /* both sides: 0, the frames holding them held */
	x[(size_t)(frames / 2) * C] = INFINITY;
	for (int v = 0; v < VOICES; v++)
		free(voice[v]);
	return x;
}

static void run_cpu(struct gf_suppress *s, float *buf, uint32_t total, uint32_t C, uint32_t max_call)
{
	for (uint32_t at = 0; at < total;) {
		uint32_t m = 1 + gf_test_rand_below(&rng, max_call);
		m = m < total - at ? m : total - at;
		gf_suppress_process(s, buf + (size_t)at * C, m);
		at += m;
	}
}

static void run_gpu(struct gf_suppress_gpu *s, float *buf, uint32_t total, uint32_t C, uint32_t max_call)
{
	for (uint32_t at = 0; at < total;) {
		uint32_t m = 1 + gf_test_rand_below(&rng, max_call);
		m = m < total - at ? m : total - at;
		int err = gf_suppress_gpu_process(s, buf + (size_t)at * C, m);
		if (err)
			printf("  process: %s: %s\n", gf_strerror(err), gf_suppress_gpu_error(s));
		CHECK(err == 0);
		at += m;
	}
}

static struct gf_suppress_gpu *make_gpu(const struct gf_suppress_params *p, uint32_t C, uint32_t rate)
{
	struct gf_errbuf eb = {{0}};
	struct gf_suppress_gpu *s = NULL;
	CHECK_OK_EB(gf_suppress_gpu_new(p, C, rate, 0, &s, &eb), &eb);
	return s;
}

static void match_case(uint32_t C, uint32_t rate, double seconds, int with_sample, double highpass_hz)
{
	uint32_t frames = (uint32_t)(seconds * rate);
	float *noise = NULL;
	struct gf_suppress_params p = {.reduction_db = 18.0, .highpass_hz = highpass_hz};
	if (with_sample) {
		noise = gf_test_noise(rate, &rng); /* one second, mono */
		for (uint32_t i = 0; i < rate; i++)
			noise[i] *= 0.05f;
		p.noise = noise;
		p.noise_frames = rate;
	}
	struct gf_errbuf eb = {{0}};
	struct gf_suppress *cpu = NULL;
	CHECK_OK_EB(gf_suppress_new(&p, C, rate, &cpu, &eb), &eb);
	struct gf_suppress_gpu *gpu = make_gpu(&p, C, rate);
	uint32_t lat = gf_suppress_latency(cpu), total = frames + lat;
	CHECK(gf_suppress_gpu_latency(gpu) == lat);
	float *want = make_input(C, frames, lat, rate);
	float *got = malloc((size_t)total * C * sizeof(float));
	memcpy(got, want, (size_t)total * C * sizeof(float));
	run_cpu(cpu, want, total, C, 700);
	run_gpu(gpu, got, total, C, 1500);
	double max_abs, rel = gf_test_worst_channel_rel_l2(got, want, C, total, &max_abs);
	printf("  %4u ch at %u Hz, %.0f s%s%s, highpass_hz %g: largest per-channel rel L2 %.2e, largest "
	       "|diff| %.2e\n",
	       C, rate, seconds, with_sample ? ", noise sample" : "", lead_s > 0.0 ? ", silence first" : "",
	       highpass_hz, rel, max_abs);
	CHECK(rel < TOL_REL_L2);
	worst_rel = fmax(worst_rel, rel);
	worst_abs = fmax(worst_abs, max_abs);
	gf_suppress_gpu_free(gpu);
	gf_suppress_free(cpu);
	free(noise), free(want), free(got);
}

/* The live floor (gf_suppress_set_floor): bypass at a third of the way, 26 dB at two thirds, set on
 * both sides at the same frame (their calls cut differently in between), ramped alike: the GPU's
 * output still equals the CPU's. */
static void floor_case(uint32_t C, uint32_t rate)
{
	uint32_t frames = 3 * rate;
	struct gf_suppress_params p = {.reduction_db = 18.0};
	struct gf_errbuf eb = {{0}};
	struct gf_suppress *cpu = NULL;
	CHECK_OK_EB(gf_suppress_new(&p, C, rate, &cpu, &eb), &eb);
	struct gf_suppress_gpu *gpu = make_gpu(&p, C, rate);
	uint32_t lat = gf_suppress_latency(cpu), total = frames + lat;
	float *want = make_input(C, frames, lat, rate), *got = malloc((size_t)total * C * sizeof(float));
	memcpy(got, want, (size_t)total * C * sizeof(float));
	const uint32_t at[3] = {0, frames / 3, 2 * frames / 3};
	const float floors[3] = {0.0f, 1.0f, gf_suppress_floor_gain(26.0, 0)};
	for (int k = 0; k < 3; k++) {
		uint32_t end = k < 2 ? at[k + 1] : total;
		if (k) {
			gf_suppress_set_floor(cpu, floors[k]);
			gf_suppress_gpu_set_floor(gpu, floors[k]);
		}
		run_cpu(cpu, want + (size_t)at[k] * C, end - at[k], C, 700);
		run_gpu(gpu, got + (size_t)at[k] * C, end - at[k], C, 1500);
	}
	double max_abs, rel = gf_test_worst_channel_rel_l2(got, want, C, total, &max_abs);
	printf("  %4u ch at %u Hz, bypass then 26 dB while running: largest per-channel rel L2 %.2e, largest "
	       "|diff| %.2e\n",
	       C, rate, rel, max_abs);
	CHECK(rel < TOL_REL_L2);
	worst_rel = fmax(worst_rel, rel);
	gf_suppress_gpu_free(gpu);
	gf_suppress_free(cpu);
	free(want), free(got);
}

/* Run @p buf's frames [from, to) (C channels) on the CPU or the GPU, calls of random size. */
static void run_span(struct gf_suppress *cpu, struct gf_suppress_gpu *gpu, float *buf, uint32_t from,
		     uint32_t to, uint32_t C)
{
	if (cpu)
		run_cpu(cpu, buf + (size_t)from * C, to - from, C, 700);
	else
		run_gpu(gpu, buf + (size_t)from * C, to - from, C, 1500);
}

/* Mains hum (suppress_hum.h): 50.02 Hz hum on harmonics 1 to 3 added to the speech in noise, the
 * set handed to both suppressors halfway (between calls on both sides, so both take it at the same
 * hop): the deeper floor in the hum's bins and its upload with a hop match the CPU. */
static void hum_case(uint32_t C, uint32_t rate)
{
	static const struct gf_suppress_hum hum = {.f0_hz = 50.02, .n = 3, .harmonic = {1, 2, 3}};
	uint32_t frames = 2 * rate;
	struct gf_suppress_params p = {.reduction_db = 18.0, .highpass_hz = 25.0, .hum_harmonics = 4};
	struct gf_errbuf eb = {{0}};
	struct gf_suppress *cpu = NULL;
	CHECK_OK_EB(gf_suppress_new(&p, C, rate, &cpu, &eb), &eb);
	struct gf_suppress_gpu *gpu = make_gpu(&p, C, rate);
	uint32_t lat = gf_suppress_latency(cpu), total = frames + lat, half = total / 2;
	float *want = make_input(C, frames, lat, rate);
	for (uint32_t i = 0; i < frames; i++)
		for (uint32_t k = 1; k <= 3; k++)
			for (uint32_t c = 0; c < C; c++)
				want[(size_t)i * C + c] +=
					(float)(0.05 / k * sin(2.0 * M_PI * 50.02 * k * i / rate));
	float *got = malloc((size_t)total * C * sizeof(float));
	CHECK(got);
	memcpy(got, want, (size_t)total * C * sizeof(float));
	run_span(cpu, NULL, want, 0, half, C);
	run_span(NULL, gpu, got, 0, half, C);
	gf_suppress_set_hum(cpu, &hum);
	gf_suppress_gpu_set_hum(gpu, &hum);
	run_span(cpu, NULL, want, half, total, C);
	run_span(NULL, gpu, got, half, total, C);
	double max_abs, rel = gf_test_worst_channel_rel_l2(got, want, C, total, &max_abs);
	printf("  %4u ch at %u Hz, hum set halfway: largest per-channel rel L2 %.2e, largest |diff| %.2e\n",
	       C, rate, rel, max_abs);
	CHECK(rel < TOL_REL_L2);
	worst_rel = fmax(worst_rel, rel);
	worst_abs = fmax(worst_abs, max_abs);
	gf_suppress_gpu_free(gpu);
	gf_suppress_free(cpu);
	free(want), free(got);
}

/* 0 dB: every gain is one, so the output is the input latency() frames late. */
static void identity_case(uint32_t C, uint32_t rate)
{
	uint32_t frames = rate;
	struct gf_suppress_params p = {.reduction_db = 0.0};
	struct gf_suppress_gpu *s = make_gpu(&p, C, rate);
	uint32_t lat = gf_suppress_gpu_latency(s), total = frames + lat;
	float *x = gf_test_noise((size_t)frames * C, &rng);
	float *y = calloc((size_t)total * C, sizeof(float));
	memcpy(y, x, (size_t)frames * C * sizeof(float));
	run_gpu(s, y, total, C, 900);
	double err = 0.0;
	for (size_t i = 0; i < (size_t)frames * C; i++)
		err = fmax(err, fabs((double)y[(size_t)lat * C + i] - x[i]));
	printf("  %u ch at %u Hz, 0 dB: the input back, %u frames late, max |error| %.2g\n", C, rate, lat,
	       err);
	CHECK(err < 1e-5);
	gf_suppress_gpu_free(s);
	free(x), free(y);
}

static void refusal_case(void)
{
	struct gf_errbuf eb = {{0}};
	struct gf_suppress_gpu *s = NULL;
	struct gf_suppress_params p = {.reduction_db = 55.0};
	CHECK(gf_suppress_gpu_new(&p, 2, 48000, 0, &s, &eb) == GF_E_INVAL && !s);
	CHECK(strstr(eb.msg, "reduction_db 55"));
	p.reduction_db = 10.0;
	CHECK(gf_suppress_gpu_new(&p, 0, 48000, 0, &s, &eb) == GF_E_INVAL && !s);
	CHECK(gf_suppress_gpu_new(&p, 2, 48000, 4096, &s, &eb) == GF_E_NOGPU && !s);
	printf("  refused: %s\n", eb.msg);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	gf_test_need_gpu();
	rng = gf_test_seed("test_gpu_suppress");
	const char *q = getenv("GPUFIR_GPU_TEST_QUICK");
	int quick = q && q[0] && strcmp(q, "0") != 0;
	static const uint32_t chans[] = {1, 2, 64, 256}, rates[] = {16000, 48000};
	for (size_t r = 0; r < 2; r++)
		for (size_t c = 0; c < sizeof(chans) / sizeof(chans[0]); c++)
			if (!quick || chans[c] == 2 || chans[c] == 64)
				match_case(chans[c], rates[r], quick ? 1.0 : 3.0, 0, 0.0);
	match_case(2, 48000, quick ? 1.0 : 3.0, 1, 0.0);
	match_case(64, 16000, quick ? 1.0 : 3.0, 1, 0.0);
	match_case(64, 48000, quick ? 1.0 : 3.0, 0, 25.0);
	match_case(2, 16000, quick ? 1.0 : 3.0, 1, 40.0);
	lead_s = 0.5; /* the steady term after it (steady(): suppress.h), on both sides */
	match_case(2, 48000, quick ? 1.0 : 3.0, 0, 0.0);
	match_case(64, 16000, quick ? 1.0 : 3.0, 0, 0.0);
	lead_s = 0.0;
	floor_case(64, 48000);
	floor_case(2, 16000);
	hum_case(2, 48000);
	hum_case(64, 16000);
	identity_case(1, 48000);
	identity_case(64, 16000);
	refusal_case();
	printf("GPU suppressor equals the CPU one: largest per-channel rel L2 %.2e (bound %.0e), largest "
	       "|diff| %.2e\n",
	       worst_rel, TOL_REL_L2, worst_abs);
	return 0;
}

#else

int main(void)
{
	gf_test_skip("built without CUDA");
}

#endif
