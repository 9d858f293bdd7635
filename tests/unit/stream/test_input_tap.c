/*
 * The worker's analysis tap (src/stream/input_tap.c):
 * 1. blocks pushed come out averaged to mono, in order, across the ring's wrap;
 * 2. a block that does not fit whole is dropped and counted, never split;
 * 3. on a detached stream's real worker: what the control thread drains is
 *    the input's mono mix frame for frame; a tap nobody drains fills, and
 *    every later block is dropped and counted while the stream runs on
 *    (every block processed).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "error.h"
#include "input_tap.h"
#include "live_internal.h"
#include "liveutil.h"
#include "testutil.h"

#define RATE 48000u
#define CH 3u
#define B 64u
#define FRAMES (RATE / 2u)

static float mono(const float *x, size_t frame)
{
	float s = 0.0f;
	for (uint32_t c = 0; c < CH; c++)
		s += x[frame * CH + c];
	return s * (1.0f / (float)CH);
}

static void direct(const float *x)
{
	struct gf_input_tap *t;
	struct gf_errbuf eb = {{0}};
	float out[512];
	CHECK_OK_EB(gf_input_tap_new(&t, 256, &eb), &eb);
	CHECK(gf_input_tap_capacity(t) == 256);
	size_t pos = 0, got = 0;
	for (int round = 0; round < 20; round++) { /* 100 + 100 in, 200 out: wraps many times */
		gf_input_tap_push(t, x + pos * CH, 100, CH);
		gf_input_tap_push(t, x + (pos + 100) * CH, 100, CH);
		pos += 200;
		uint32_t n = gf_input_tap_read(t, out, 512);
		CHECK(n == 200);
		for (uint32_t i = 0; i < n; i++)
			CHECK(out[i] == mono(x, got + i));
		got += n;
	}
	CHECK(gf_input_tap_dropped(t) == 0 && gf_input_tap_taken(t) == got);
	/* 2. full: 100 + 100 fit, the third does not (56 free) and is dropped whole */
	for (int i = 0; i < 3; i++)
		gf_input_tap_push(t, x + (size_t)i * 100 * CH, 100, CH);
	CHECK(gf_input_tap_dropped(t) == 100);
	CHECK(gf_input_tap_read(t, out, 512) == 200);
	CHECK(out[150] == mono(x, 150));
	gf_input_tap_free(t);
	printf("direct: %zu frames through a 256-frame tap, in order; a block that did not fit dropped "
	       "whole\n",
	       got);
}

/* A detached stream with tap @p t; @p drain: the control thread reads it after every block.
 * @return the blocks the worker ran. */
static uint64_t play(const float *x, float *y, struct gf_input_tap *t, int drain, float *mono_out,
		     size_t *mono_n)
{
	struct gf_engine *e = gf_test_passthrough_engine(CH, B, 32);
	struct gf_live *l;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_live_new_detached(&l, RATE, CH, B, 1, NULL, e, &eb), &eb);
	gf_live_set_tap(l, t);
	CHECK_OK_EB(gf_live_start(l, &eb), &eb);
	for (uint32_t pos = 0; pos + B <= FRAMES; pos += B) {
		if (pos)
			gf_test_live_wait_idle(l, B);
		if (drain)
			*mono_n += gf_input_tap_read(t, mono_out + *mono_n, FRAMES);
		gf_live_duplex_cb(x + (size_t)pos * CH, y + (size_t)pos * CH, B, NULL, 0, l);
	}
	gf_test_live_wait_idle(l, B);
	if (drain)
		*mono_n += gf_input_tap_read(t, mono_out + *mono_n, FRAMES);
	struct gf_live_stats s;
	gf_live_get_stats(l, &s);
	gf_live_stop(l);
	gf_live_free(l);
	gf_engine_free(e);
	return s.blocks;
}

int main(void)
{
	uint64_t seed = gf_test_seed("test_input_tap");
	float *x = gf_test_noise((size_t)FRAMES * CH, &seed), *y = calloc((size_t)FRAMES * CH, sizeof(float));
	float *m = calloc(FRAMES, sizeof(float));
	CHECK(x && y && m);
	direct(x);

	struct gf_input_tap *t;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_input_tap_new(&t, RATE, &eb), &eb);
	size_t n = 0;
	uint64_t blocks = play(x, y, t, 1, m, &n);
	size_t bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += m[i] != mono(x, i);
	printf("stream, drained: %llu blocks, %zu mono frames taken (of %u), %zu differ, %llu dropped\n",
	       (unsigned long long)blocks, n, FRAMES, bad, (unsigned long long)gf_input_tap_dropped(t));
	CHECK(n >= FRAMES - 2 * B && bad == 0 && gf_input_tap_dropped(t) == 0);
	gf_input_tap_free(t);

	CHECK_OK_EB(gf_input_tap_new(&t, 1024, &eb), &eb);
	blocks = play(x, y, t, 0, NULL, NULL);
	uint64_t dropped = gf_input_tap_dropped(t), taken = gf_input_tap_taken(t);
	printf("stream, never drained: %llu blocks, %llu frames taken, %llu dropped\n",
	       (unsigned long long)blocks, (unsigned long long)taken, (unsigned long long)dropped);
	CHECK(taken == 1024 && dropped + taken == blocks * B && blocks >= FRAMES / B - 2);
	gf_input_tap_free(t);
	free(x);
	free(y);
	free(m);
	puts("test_input_tap: ok");
	return 0;
}
