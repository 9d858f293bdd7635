/*
 * A stream whose output has other channels than its input: a mixer engine
 * (a 2 -> 4 crossover, a 4 -> 2 downmix) on a detached stream, the test
 * playing the duplex callback itself while the real worker runs. Each played
 * output channel is the sum of its paths (each a gain at a delay, so the
 * reference is exact) at the stream's latency; the recording has the
 * output's channels, frame i from capture position i; the gain stage meters
 * the input's channels on the capture side and the output's on the playback
 * side; the stats carry both counts. A stream whose output.channels
 * contradicts the engine is refused by gf_live_new with the reason.
 */
#include <math.h>
#include <sndfile.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "error.h"
#include "gain_stage.h"
#include "live_internal.h"
#include "liveutil.h"
#include "sndutil.h"
#include "testutil.h"

#define RATE 48000u
#define B 64u
#define TAPS 16u
#define FRAMES (RATE / 2u)
#define MAXP 8u

struct path {
	uint32_t in, out, delay;
	float gain;
};

static struct gf_engine *mixer_engine(uint32_t nin, uint32_t nout, const struct path *p, uint32_t np)
{
	struct gf_filter_set *fs;
	CHECK_OK(gf_filter_set_new_mixer(&fs, nin, nout, np, TAPS));
	for (uint32_t k = 0; k < np; k++) {
		fs->path_in[k] = p[k].in;
		fs->path_out[k] = p[k].out;
		gf_filter_set_channel(fs, k)[p[k].delay] = p[k].gain;
	}
	struct gf_engine *e = gf_test_cpu_engine(nin, B, TAPS, 0, GF_ALGO_AUTO, 0, fs);
	gf_filter_set_free(fs);
	return e;
}

/* The sum over each output's paths, in double. */
static double ref_at(const float *x, uint32_t nin, const struct path *p, uint32_t np, uint32_t i, uint32_t o)
{
	double acc = 0.0;
	for (uint32_t k = 0; k < np; k++)
		if (p[k].out == o && i >= p[k].delay)
			acc += (double)p[k].gain * x[(size_t)(i - p[k].delay) * nin + p[k].in];
	return acc;
}

/* Frames [lat, frames) of @p y (nout channels) against the reference delayed by @p lat. */
static double worst_diff(const float *y, uint32_t frames, uint32_t lat, const float *x, uint32_t nin,
			 uint32_t nout, const struct path *p, uint32_t np)
{
	double worst = 0.0;
	for (uint32_t i = lat; i < frames; i++)
		for (uint32_t o = 0; o < nout; o++)
			worst = fmax(worst,
				     fabs(y[(size_t)i * nout + o] - ref_at(x, nin, p, np, i - lat, o)));
	return worst;
}

static void run_case(const char *name, uint32_t nin, uint32_t nout, const struct path *p, uint32_t np,
		     const char *dir, uint64_t *seed)
{
	float *x = malloc((size_t)FRAMES * nin * sizeof(float));
	float *y = calloc((size_t)FRAMES * nout, sizeof(float));
	CHECK(x && y);
	for (size_t i = 0; i < (size_t)FRAMES * nin; i++)
		x[i] = 0.4f * gf_test_randf(seed);
	char wav[600];
	snprintf(wav, sizeof(wav), "%s/%s.wav", dir, name);

	struct gf_engine *e = mixer_engine(nin, nout, p, np);
	struct gf_gain_stage *g;
	struct gf_live *l;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_gain_stage_new(&g, nin > nout ? nin : nout, RATE, 1.0f, 0, &eb), &eb);
	CHECK_OK_EB(gf_live_new_detached_io(&l, RATE, nin, nout, B, 1, wav, e, &eb), &eb);
	gf_live_set_gain(l, g);
	CHECK_OK_EB(gf_live_start(l, &eb), &eb);
	for (uint32_t pos = 0; pos + B <= FRAMES; pos += B) {
		if (pos)
			gf_test_live_wait_idle(l, B);
		gf_live_duplex_cb(x + (size_t)pos * nin, y + (size_t)pos * nout, B, NULL, 0, l);
	}
	gf_test_live_wait_idle(l, B);
	struct gf_live_stats s;
	gf_live_get_stats(l, &s);
	struct gf_gain_reader r = {0};
	struct gf_gain_levels lv;
	CHECK_OK(gf_gain_stage_levels(g, 0, &r, &lv));
	gf_live_stop(l);
	gf_live_free(l);

	double d = worst_diff(y, FRAMES, s.latency_frames, x, nin, nout, p, np);
	printf("%s: %u in, %u out (stats %u, %u), latency %u: worst played difference %.3g; meters "
	       "capture %u, playback %u channels\n",
	       name, nin, nout, s.channels, s.out_channels, s.latency_frames, d, lv.capture_channels,
	       lv.playback_channels);
	CHECK(s.channels == nin && s.out_channels == nout);
	CHECK(s.latency_frames > 0 && d < 1e-5);
	CHECK(lv.capture_channels == nin && lv.playback_channels == nout);
	CHECK(lv.channels == (nin > nout ? nin : nout));
	/* Each played channel's meter: its peak over the interval, as played.
	 * The stream's stats are the same meters: the peak over all channels
	 * and the samples beyond +-1.0. */
	double all = 0.0;
	uint64_t clipped = 0;
	for (uint32_t o = 0; o < nout; o++) {
		double pk = 0.0;
		for (uint32_t i = 0; i < FRAMES; i++) {
			pk = fmax(pk, fabs(y[(size_t)i * nout + o]));
			clipped += fabsf(y[(size_t)i * nout + o]) > 1.0f;
		}
		CHECK(pk > 0.01 && fabs(lv.playback_peak[o] - pk) < 1e-6);
		all = fmax(all, pk);
	}
	CHECK(fabs(s.peak - all) < 1e-6 && s.clipped == clipped && lv.clipped_total == clipped);
	for (uint32_t c = nout; c < lv.channels; c++) /* beyond the output's channels: silence */
		CHECK(lv.playback_peak[c] == 0.0f);
	for (uint32_t c = nin; c < lv.channels; c++)
		CHECK(lv.capture_peak[c] == 0.0f);

	/* The recording: the output's channels, frame i from capture position i. */
	SF_INFO info = {0};
	float *w = gf_test_read_sound(wav, &info, 1);
	CHECK(info.channels == (int)nout && (uint64_t)info.frames == s.capture_frames);
	double dr = worst_diff(w, (uint32_t)info.frames, 0, x, nin, nout, p, np);
	printf("%s: recording %lld frames of %d channels: worst difference %.3g\n", name,
	       (long long)info.frames, info.channels, dr);
	CHECK(dr < 1e-5);
	free(w);
	unlink(wav);
	gf_gain_reader_free(&r);
	gf_gain_stage_free(g);
	gf_engine_free(e);
	free(x);
	free(y);
}

/* gf_live_new refuses an output.channels the engine does not write, before any device is opened. */
static void check_refused(void)
{
	static const struct path xo[] = {{0, 0, 0, 1.0f}, {0, 1, 1, 1.0f}, {1, 2, 0, 1.0f}, {1, 3, 2, 1.0f}};
	struct gf_engine *e = mixer_engine(2, 4, xo, 4);
	struct gf_live_params lp = {.block_frames = B, .input = {.channels = 2}, .output = {.channels = 2}};
	struct gf_live *l = NULL;
	struct gf_errbuf eb = {{0}};
	int err = gf_live_new(&l, &lp, e, &eb);
	printf("output.channels = 2 for a 2 -> 4 mixer: %s\n", eb.msg);
	CHECK(err == GF_E_CONFIG && !l && strstr(eb.msg, "output.channels = 2") &&
	      strstr(eb.msg, "writes 4"));
	gf_engine_free(e);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	uint64_t seed = gf_test_seed("test_live_mixer");
	char *dir = gf_test_tmpdir("live_mixer");
	/* A two-way crossover: each input to a "woofer" and a "tweeter", one path inverted, one delayed. */
	static const struct path xo[] = {
		{0, 0, 0, 0.9f}, {0, 1, 3, -0.7f}, {1, 2, 1, 0.8f}, {1, 3, 5, 0.6f}, {1, 0, 7, 0.25f},
	};
	run_case("crossover", 2, 4, xo, 5, dir, &seed);
	/* A downmix: four channels into two, each output the sum of two inputs. */
	static const struct path dm[] = {{0, 0, 0, 0.5f}, {2, 0, 2, 0.5f}, {1, 1, 0, 0.5f}, {3, 1, 4, -0.5f}};
	run_case("downmix", 4, 2, dm, 4, dir, &seed);
	check_refused();
	rmdir(dir);
	free(dir);
	printf("test_live_mixer: ok\n");
	return 0;
}
