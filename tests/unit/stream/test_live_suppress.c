/*
 * The stream runs the noise suppressor after the engine, on its worker,
 * without a device: the test plays the duplex callback itself while the real
 * worker runs a pass-through engine and the suppressor. Each channel's
 * output is the input suppressed by a bank of the same settings, run apart
 * on the same input in calls of other sizes, delayed by the stream's
 * latency: the suppressor's latency is on top of it, and reported in the
 * stats. A stream without one passes the input untouched. A block with a NaN
 * is a gap to the suppressor, which holds its state over it. (The suppressor's
 * effect on noise is tested offline, test_offline_suppress.)
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "engine.h"
#include "error.h"
#include "live_internal.h"
#include "liveutil.h"
#include "suppress_bank.h"
#include "testutil.h"

#define RATE 48000u
#define CH 2u
#define B 64u
#define FRAMES (RATE * 2u)

static struct gf_suppress_bank *make_bank(void)
{
	struct gf_suppress_params p = {.reduction_db = 18.0};
	const struct gf_suppress_params *per[CH] = {&p, &p};
	struct gf_suppress_bank *b;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_suppress_bank_new(per, CH, RATE, &b, &eb), &eb);
	return b;
}

/* Play @p x through a detached stream (with @p bank, or none) into @p y; @return its stats. */
static struct gf_live_stats play(const float *x, float *y, struct gf_suppress_bank *bank)
{
	struct gf_engine *e = gf_test_passthrough_engine(CH, B, 32);
	struct gf_live *l;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_live_new_detached(&l, RATE, CH, B, 1, NULL, e, &eb), &eb);
	gf_live_set_suppress(l, bank);
	CHECK_OK_EB(gf_live_start(l, &eb), &eb);
	for (uint32_t pos = 0; pos + B <= FRAMES; pos += B) {
		if (pos)
			gf_test_live_wait_idle(l, B);
		gf_live_duplex_cb(x + (size_t)pos * CH, y + (size_t)pos * CH, B, NULL, 0, l);
	}
	struct gf_live_stats s;
	gf_live_get_stats(l, &s);
	gf_live_stop(l);
	gf_live_free(l);
	gf_engine_free(e);
	return s;
}

/* Frames [lat, FRAMES) of @p y against @p ref delayed by @p lat: the worst difference. */
static double worst_diff(const float *y, const float *ref, uint32_t lat)
{
	double worst = 0.0;
	for (uint32_t p = lat; p < FRAMES; p++)
		for (uint32_t c = 0; c < CH; c++)
			worst = fmax(worst,
				     fabs((double)y[(size_t)p * CH + c] - ref[(size_t)(p - lat) * CH + c]));
	return worst;
}

/* The reference bank on @p x into @p ref, in calls of 1000 frames. */
static void reference(const float *x, float *ref)
{
	struct gf_suppress_bank *refbank = make_bank();
	memcpy(ref, x, (size_t)FRAMES * CH * sizeof(float));
	for (uint32_t pos = 0; pos < FRAMES; pos += 1000)
		gf_suppress_bank_process(refbank, ref + (size_t)pos * CH,
					 pos + 1000 <= FRAMES ? 1000 : FRAMES - pos);
	gf_suppress_bank_free(refbank);
}

/*
 * A NaN in one block: the engine mutes that block, and the suppressor takes
 * it as a gap (missing input on every channel, its state held over it), not
 * as silence to learn the noise from: the output is the reference bank's on
 * the input with that block missing (NaN). The block's silence used to enter
 * the noise estimate, and the output after it differed.
 */
static void nan_block(float *x, float *y, float *ref)
{
	const uint32_t blk = RATE / B; /* the block at 1 s */
	x[(size_t)blk * B * CH + 5 * CH] = NAN;
	float *missing = malloc((size_t)FRAMES * CH * sizeof(float));
	CHECK(missing);
	memcpy(missing, x, (size_t)FRAMES * CH * sizeof(float));
	for (size_t i = (size_t)blk * B * CH; i < (size_t)(blk + 1) * B * CH; i++)
		missing[i] = NAN;
	reference(missing, ref);
	struct gf_suppress_bank *bank = make_bank();
	memset(y, 0, (size_t)FRAMES * CH * sizeof(float));
	struct gf_live_stats s = play(x, y, bank);
	double d = worst_diff(y, ref, s.latency_frames);
	printf("a NaN in the block at 1 s: worst difference from the reference with that block missing "
	       "%.3g\n",
	       d);
	CHECK(d < 1e-6);
	gf_suppress_bank_free(bank);
	free(missing);
}

int main(void)
{
	uint64_t seed = gf_test_seed("test_live_suppress");
	float *x = malloc((size_t)FRAMES * CH * sizeof(float)),
	      *y = calloc((size_t)FRAMES * CH, sizeof(float));
	float *ref = malloc((size_t)FRAMES * CH * sizeof(float));
	CHECK(x && y && ref);
	for (uint32_t i = 0; i < FRAMES; i++) { /* a tone that comes and goes, in noise */
		double tone = (i / (RATE / 4)) % 2 ? 0.3 * sin(2.0 * M_PI * 440.0 * i / RATE) : 0.0;
		for (uint32_t c = 0; c < CH; c++)
			x[(size_t)i * CH + c] = (float)(tone + 0.05 * gf_test_randf(&seed));
	}

	/* without a suppressor: the input, untouched, at the stream's latency */
	struct gf_live_stats s = play(x, y, NULL);
	double d = worst_diff(y, x, s.latency_frames);
	printf("no suppressor: latency %u frames, suppressor 0: worst difference %.3g\n", s.latency_frames,
	       d);
	CHECK(s.suppress_frames == 0 && d < 1e-6);

	/* with one: the reference bank on the same input, in calls of 1000 frames */
	struct gf_suppress_bank *bank = make_bank();
	reference(x, ref);
	memset(y, 0, (size_t)FRAMES * CH * sizeof(float));
	s = play(x, y, bank);
	d = worst_diff(y, ref, s.latency_frames);
	double moved = worst_diff(y, x, s.latency_frames + s.suppress_frames);
	printf("suppressor: latency %u frames + suppressor %u: worst difference from the reference %.3g "
	       "(from the input at the total latency %.3g)\n",
	       s.latency_frames, s.suppress_frames, d, moved);
	CHECK(s.suppress_frames == gf_suppress_bank_latency(bank) && s.suppress_frames > 0);
	CHECK(d < 1e-6);
	gf_suppress_bank_free(bank);
	nan_block(x, y, ref);
	free(x);
	free(y);
	free(ref);
	printf("test_live_suppress: ok\n");
	return 0;
}
