/*
 * The gain stage (volume, mute, meters) on its own and on the live worker:
 * - the ramp: a mute, an unmute and a volume step move the gain by at most
 *   |change| / ramp frames per sample (a DC channel shows the gain itself),
 *   and a 200 Hz sine muted and unmuted mid-wave carries no click: the energy
 *   of its second difference (a 12 dB/octave high-pass: 10 kHz stands 68 dB
 *   above 200 Hz) stays near the untouched sine's, where an instant step of
 *   the same gain adds a thousand times more;
 * - meters: a known sine gives its known peak and RMS on both sides, gain
 *   applied on the playback side; samples beyond +-1.0 after the volume are
 *   counted per channel and reset on request; two readers keep intervals of
 *   their own, and a read with no block between gives 0;
 * - on a detached live stream, the worker's output is the input times the
 *   gain, delayed by the stream's latency.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "error.h"
#include "gain_stage.h"
#include "live_internal.h"
#include "liveutil.h"
#include "testutil.h"

#define RATE 48000u
#define B 64u

static struct gf_gain_stage *stage(uint32_t ch, float gain, int mute)
{
	struct gf_gain_stage *g;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_gain_stage_new(&g, ch, RATE, gain, mute, &eb), &eb);
	return g;
}

/* Channel 0 a 200 Hz sine of 0.5, channel 1 DC 1.0 (it shows the gain). */
static float *tone_and_dc(uint32_t frames)
{
	float *x = malloc((size_t)frames * 2 * sizeof(float));
	CHECK(x);
	for (uint32_t i = 0; i < frames; i++) {
		x[2 * i] = (float)(0.5 * sin(2.0 * M_PI * 200.0 * i / RATE + 0.3));
		x[2 * i + 1] = 1.0f;
	}
	return x;
}

/* Energy of channel 0's second difference over [from, to). */
static double click_energy(const float *y, uint32_t from, uint32_t to)
{
	double e = 0.0;
	for (uint32_t i = from; i < to; i++) {
		double d = (double)y[2 * i] - 2.0 * y[2 * (i - 1)] + y[2 * (i - 2)];
		e += d * d;
	}
	return e;
}

/* The largest sample-to-sample change of the gain (channel 1) over [1, frames). */
static double max_gain_step(const float *y, uint32_t frames)
{
	double m = 0.0;
	for (uint32_t i = 1; i < frames; i++)
		m = fmax(m, fabs((double)y[2 * i + 1] - y[2 * (i - 1) + 1]));
	return m;
}

/* Run @p x through @p g in blocks of B; at frame @p at[k] (a block edge) set (gain[k], mute[k]). */
static void run(struct gf_gain_stage *g, float *y, const float *x, uint32_t frames, const uint32_t *at,
		const float *gain, const int *mute, int n)
{
	memcpy(y, x, (size_t)frames * 2 * sizeof(float));
	for (uint32_t pos = 0, k = 0; pos < frames; pos += B) {
		while ((int)k < n && at[k] == pos) {
			gf_gain_stage_set(g, gain[k], mute[k]);
			k++;
		}
		gf_gain_stage_process(g, x + (size_t)pos * 2, y + (size_t)pos * 2, B, 2);
	}
}

static void test_ramp(void)
{
	const uint32_t frames = RATE / 2; /* 0.5 s */
	float *x = tone_and_dc(frames), *y = malloc((size_t)frames * 2 * sizeof(float));
	float *z = malloc((size_t)frames * 2 * sizeof(float));
	CHECK(y && z);
	struct gf_gain_stage *g = stage(2, 1.0f, 0);
	uint32_t ramp = gf_gain_stage_ramp_frames(g);
	CHECK(ramp == (uint32_t)lround(GF_GAIN_RAMP_MS * RATE / 1000.0));
	/* mute at 64 blocks, unmute at 192, down to -12 dB at 320 */
	const uint32_t at[] = {64 * B, 192 * B, 320 * B};
	const float gains[] = {1.0f, 1.0f, 0.25f};
	const int mutes[] = {1, 0, 0};
	run(g, y, x, frames, at, gains, mutes, 3);
	double step = max_gain_step(y, frames);
	printf("ramp %u frames: largest gain step %.6f (a ramp allows %.6f)\n", ramp, step, 1.0 / ramp);
	CHECK(step <= 1.0 / ramp * 1.001 + 1e-7 && step <= 1.0 / (RATE / 50)); /* 20 ms at least */
	CHECK(step > 0.5 / ramp); /* it did ramp: a mute of gain 1 in ramp steps */
	/* The gain reached each target, and holds it. */
	CHECK(y[2 * (at[0] + ramp) + 1] == 0.0f && y[2 * (at[1] - 1) + 1] == 0.0f);
	CHECK(fabsf(y[2 * (at[1] + ramp) + 1] - 1.0f) < 1e-6f);
	CHECK(fabsf(y[2 * (frames - 1) + 1] - 0.25f) < 1e-6f);
	CHECK(fabsf(y[2 * (at[0] + ramp / 2) + 1] - 0.5f) < 0.01f); /* half way through the fade */

	/* The click metric around the mute and the unmute: ramped, untouched, an instant step. */
	uint32_t w0 = at[0] - 200, w1 = at[0] + ramp + 200;
	uint32_t v0 = at[1] - 200, v1 = at[1] + ramp + 200;
	double ramped = click_energy(y, w0, w1) + click_energy(y, v0, v1);
	double plain = click_energy(x, w0, w1) + click_energy(x, v0, v1);
	memcpy(z, x, (size_t)frames * 2 * sizeof(float));
	for (uint32_t i = at[0]; i < at[1]; i++)
		z[2 * i] = z[2 * i + 1] = 0.0f;
	double stepped = click_energy(z, w0, w1) + click_energy(z, v0, v1);
	printf("click energy: untouched %.3g, ramped %.3g, instant step %.3g\n", plain, ramped, stepped);
	CHECK(ramped < 2.0 * plain);
	CHECK(stepped > 1000.0 * ramped);
	CHECK(max_gain_step(z, frames) == 1.0); /* the metric above fails an instant step */
	gf_gain_stage_free(g);
	free(x);
	free(y);
	free(z);
}

/* A target changed again mid-ramp: the ramp restarts from where the gain is, no jump. */
static void test_ramp_retarget(void)
{
	const uint32_t frames = 64 * B;
	float *x = tone_and_dc(frames), *y = malloc((size_t)frames * 2 * sizeof(float));
	CHECK(y);
	struct gf_gain_stage *g = stage(2, 0.0f, 1);
	uint32_t ramp = gf_gain_stage_ramp_frames(g);
	const uint32_t at[] = {8 * B, 9 * B, 10 * B};
	const float gains[] = {1.0f, 1.0f, 0.1f};
	const int mutes[] = {0, 1, 0};
	run(g, y, x, frames, at, gains, mutes, 3);
	CHECK(y[1] == 0.0f); /* started muted, no fade-in from 1 */
	CHECK(max_gain_step(y, frames) <= 1.0 / ramp * 1.001 + 1e-7);
	CHECK(fabsf(y[2 * (frames - 1) + 1] - 0.1f) < 1e-6f);
	gf_gain_stage_free(g);
	free(x);
	free(y);
}

static void test_meters(void)
{
	const uint32_t frames = 48 * 100; /* 100 periods of 1 kHz */
	float *x = malloc((size_t)frames * 2 * sizeof(float)),
	      *y = malloc((size_t)frames * 2 * sizeof(float));
	CHECK(x && y);
	uint64_t want_clip = 0;
	for (uint32_t i = 0; i < frames; i++) {
		x[2 * i] = (float)(0.6 * sin(2.0 * M_PI * 1000.0 * i / RATE));
		x[2 * i + 1] = 0.25f * x[2 * i];
		want_clip += fabsf(2.0f * x[2 * i]) > 1.0f;
	}
	memcpy(y, x, (size_t)frames * 2 * sizeof(float));
	struct gf_gain_stage *g = stage(2, 2.0f, 0); /* +6 dB: channel 0 clips */
	struct gf_gain_reader rs = {0}, ra = {0};
	struct gf_gain_levels *lv = malloc(sizeof(*lv));
	CHECK(lv);
	CHECK_OK(gf_gain_stage_levels(g, GF_GAIN_READER_STATUS, &rs, lv));
	CHECK(lv->channels == 0 && lv->frames == 0); /* no block yet */
	for (uint32_t pos = 0; pos < frames; pos += B)
		gf_gain_stage_process(g, x + (size_t)pos * 2, y + (size_t)pos * 2, B, 2);
	CHECK_OK(gf_gain_stage_levels(g, GF_GAIN_READER_STATUS, &rs, lv));
	CHECK(lv->channels == 2 && lv->frames == frames);
	double rms = 0.6 / sqrt(2.0);
	printf("capture peak %.6f rms %.6f, playback peak %.6f rms %.6f, clipped %llu (want %llu)\n",
	       lv->capture_peak[0], lv->capture_rms[0], lv->playback_peak[0], lv->playback_rms[0],
	       (unsigned long long)lv->clipped[0], (unsigned long long)want_clip);
	CHECK(fabsf(lv->capture_peak[0] - 0.6f) < 1e-6f && fabsf(lv->playback_peak[0] - 1.2f) < 1e-5f);
	CHECK(fabs(lv->capture_rms[0] - rms) < 1e-5 && fabs(lv->playback_rms[0] - 2.0 * rms) < 1e-5);
	CHECK(fabsf(lv->capture_peak[1] - 0.15f) < 1e-6f && fabs(lv->playback_rms[1] - 0.5 * rms) < 1e-5);
	CHECK(want_clip > 0 && lv->clipped[0] == want_clip && lv->clipped[1] == 0);
	CHECK(lv->clipped_total == want_clip && gf_gain_stage_clipped(g) == want_clip);
	/* The live stream's figures: the same count, the playback peak over all
	 * channels since the previous take. */
	CHECK(gf_gain_stage_clipped_total(g) == want_clip);
	CHECK(fabsf(gf_gain_stage_peak_take(g) - 1.2f) < 1e-5f && gf_gain_stage_peak_take(g) == 0.0f);
	/* The other reader has its own interval: the same figures. */
	CHECK_OK(gf_gain_stage_levels(g, GF_GAIN_READER_API, &ra, lv));
	CHECK(lv->frames == frames && fabsf(lv->playback_peak[0] - 1.2f) < 1e-5f);
	/* Read again with no block between: an empty interval. */
	CHECK_OK(gf_gain_stage_levels(g, GF_GAIN_READER_STATUS, &rs, lv));
	CHECK(lv->frames == 0 && lv->playback_peak[0] == 0.0f && lv->playback_rms[0] == 0.0f);
	CHECK(lv->clipped[0] == want_clip); /* clipped counts run until a reset */
	/* Back to 0 dB; once the ramp from +6 dB is over, a reset, then a quieter
	 * interval: its RMS is over it alone, not the run's, and nothing clips. */
	gf_gain_stage_set(g, 1.0f, 0);
	memcpy(y, x, (size_t)frames * 2 * sizeof(float));
	for (uint32_t pos = 0; pos < frames; pos += B)
		gf_gain_stage_process(g, x + (size_t)pos * 2, y + (size_t)pos * 2, B, 2);
	uint64_t total = gf_gain_stage_clipped_total(g); /* the ramp down from +6 dB may clip more */
	CHECK(total >= want_clip);
	gf_gain_stage_clipped_reset(g);
	CHECK(gf_gain_stage_clipped(g) == 0 && gf_gain_stage_clipped_total(g) == total); /* not reset */
	memcpy(y, x, (size_t)frames * 2 * sizeof(float));
	CHECK_OK(gf_gain_stage_levels(g, GF_GAIN_READER_STATUS, &rs, lv));
	CHECK(lv->clipped[0] == 0);
	for (uint32_t pos = 0; pos < frames; pos += B)
		gf_gain_stage_process(g, x + (size_t)pos * 2, y + (size_t)pos * 2, B, 2);
	CHECK_OK(gf_gain_stage_levels(g, GF_GAIN_READER_STATUS, &rs, lv));
	CHECK(fabs(lv->playback_rms[0] - rms) < 1e-5 && lv->clipped[0] == 0);
	CHECK(gf_gain_stage_levels(g, 7, &rs, lv) == GF_E_INVAL);
	gf_gain_reader_free(&rs);
	gf_gain_reader_free(&ra);
	gf_gain_stage_free(g);
	free(lv);
	free(x);
	free(y);
}

static void test_bad_args(void)
{
	struct gf_gain_stage *g;
	struct gf_errbuf eb = {{0}};
	CHECK(gf_gain_stage_new(&g, 0, RATE, 1.0f, 0, &eb) == GF_E_INVAL && !g && eb.msg[0]);
	CHECK(gf_gain_stage_new(&g, 2, RATE, NAN, 0, &eb) == GF_E_INVAL);
	CHECK(gf_gain_stage_new(&g, 2, RATE, -1.0f, 0, &eb) == GF_E_INVAL);
	CHECK(gf_gain_stage_new(&g, GF_GAIN_MAX_CHANNELS + 1, RATE, 1.0f, 0, &eb) == GF_E_INVAL);
}

/* On the worker: output = input x gain, delayed by the stream's latency. */
static void test_on_worker(void)
{
	const uint32_t frames = 200 * B;
	float *x = tone_and_dc(frames), *y = calloc((size_t)frames * 2, sizeof(float));
	CHECK(y);
	struct gf_engine *e = gf_test_passthrough_engine(2, B, 32);
	struct gf_gain_stage *g = stage(2, 0.5f, 0);
	struct gf_live *l;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_live_new_detached(&l, RATE, 2, B, 1, NULL, e, &eb), &eb);
	gf_live_set_gain(l, g);
	CHECK_OK_EB(gf_live_start(l, &eb), &eb);
	for (uint32_t pos = 0; pos < frames; pos += B) {
		if (pos)
			gf_test_live_wait_idle(l, B);
		gf_live_duplex_cb(x + (size_t)pos * 2, y + (size_t)pos * 2, B, NULL, 0, l);
	}
	struct gf_live_stats s;
	gf_live_get_stats(l, &s);
	gf_live_stop(l);
	gf_live_free(l);
	uint32_t lat = s.latency_frames;
	CHECK(lat > 0 && lat < frames / 2);
	double worst = 0.0;
	for (uint32_t p = lat; p < frames; p++)
		for (uint32_t c = 0; c < 2; c++)
			worst = fmax(worst, fabs(y[2 * p + c] - 0.5 * x[2 * (p - lat) + c]));
	printf("on the worker: latency %u, worst difference from x * 0.5: %g\n", lat, worst);
	CHECK(worst < 1e-6);
	struct gf_gain_reader r = {0};
	struct gf_gain_levels *lv = malloc(sizeof(*lv));
	CHECK(lv);
	CHECK_OK(gf_gain_stage_levels(g, GF_GAIN_READER_API, &r, lv));
	CHECK(lv->channels == 2 && fabsf(lv->capture_peak[1] - 1.0f) < 1e-6f &&
	      fabsf(lv->playback_peak[1] - 0.5f) < 1e-6f);
	gf_gain_reader_free(&r);
	free(lv);
	gf_gain_stage_free(g);
	gf_engine_free(e);
	free(x);
	free(y);
}

int main(void)
{
	test_ramp();
	test_ramp_retarget();
	test_meters();
	test_bad_args();
	test_on_worker();
	return 0;
}
