/* reload.c: a good config swaps the filter (the engine's output becomes the
 * new filter's reference convolution), a broken one (syntax error, missing
 * file, NaN tap) leaves the running filter and says FILE:LINE, a change of
 * stream settings is flagged as a restart, and a swap still crossfading is
 * waited for. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "engine.h"
#include "filter_set.h"
#include "reload.h"
#include "testutil.h"

#define CH 2
#define BLOCK 64
#define FRAMES (BLOCK * 400)

static char dir[512], conf[600];
static uint64_t rng;
static float *x, *y; /* whole input and output, interleaved */
static uint32_t pos; /* frames processed so far */
static float ha_taps[63], hb_taps[255], hc_taps[4095];

static void write_text(const char *name, const char *text)
{
	free(gf_test_write_text_in(dir, name, text));
}

/* A taps file of @p n decaying-noise taps; the taps are kept in @p h. */
static void write_taps(const char *name, float *h, uint32_t n)
{
	gf_test_fill_decaying_taps(h, n, &rng);
	char *text = gf_test_taps_text(h, n, "\n");
	write_text(name, text);
	free(text);
}

static void write_conf_full(const char *taps_file, int rate, int block, double xfade_ms, const char *extra)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "sample_rate = %d;\nblock_frames = %d;\nbackend = \"cpu\";\ncrossfade_ms = %.1f;\n"
		 "%s\nfilters = (\n  { name = \"f\"; file = \"%s\"; format = \"text\"; }\n);\n"
		 "chain = [\"f\"];\n",
		 rate, block, xfade_ms, extra, taps_file);
	write_text("gpufir.conf", text);
}

static void write_conf(const char *taps_file, const char *extra)
{
	write_conf_full(taps_file, 48000, BLOCK, 0.0, extra);
}

static void process(struct gf_engine *e, uint32_t blocks)
{
	for (uint32_t b = 0; b < blocks; b++, pos += BLOCK) {
		CHECK(pos + BLOCK <= FRAMES);
		CHECK_OK(gf_engine_process(e, x + (size_t)pos * CH, y + (size_t)pos * CH, BLOCK));
	}
}

/* Output frames [from, pos) against the reference for filter @p h (same on
 * every channel) over the whole input: the filter in use on that range. */
static double err_since(uint32_t from, const float *h, uint32_t taps)
{
	float *hh = malloc(sizeof(float) * taps * CH);
	double *ref = malloc(sizeof(double) * pos * CH);
	CHECK(hh && ref);
	for (uint32_t c = 0; c < CH; c++)
		memcpy(hh + (size_t)c * taps, h, sizeof(float) * taps);
	gf_test_reference(x, pos, CH, hh, taps, ref);
	double e = gf_test_rel_l2_frames(y, ref, from, pos, CH);
	free(hh);
	free(ref);
	return e;
}

static struct gf_engine *engine_for(const struct gf_config *c)
{
	struct gf_filter_set *fs = NULL;
	struct gf_engine *e = NULL;
	struct gf_engine_params p;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_build(c, c->sample_rate, gf_reload_channels(c), &fs, &eb), &eb);
	gf_reload_engine_params(c, fs->taps, &p);
	CHECK(p.channels == CH && p.max_block == BLOCK && p.max_taps == GF_RELOAD_DEFAULT_MAX_TAPS);
	CHECK_OK_EB(gf_engine_new(&e, &p, fs, &eb), &eb);
	gf_filter_set_free(fs);
	return e;
}

/* Reload expecting failure: the text names @p want (file:line), the engine keeps @p h. */
static void expect_failure(const struct gf_config_source *o, const struct gf_config *cfg, struct gf_engine *e,
			   const char *want, const float *h, uint32_t taps)
{
	struct gf_reload_result r;
	struct gf_config *next = (struct gf_config *)1;
	int err = gf_reload(o, cfg, e, 100, &next, &r);
	printf("  %s\n", r.text);
	CHECK(err != 0 && r.err == err && r.outcome == GF_RELOAD_FAILED && next == NULL);
	CHECK(strncmp(r.text, "reload failed: ", 15) == 0);
	if (!strstr(r.text, want)) {
		fprintf(stderr, "'%s' does not mention '%s'\n", r.text, want);
		exit(1);
	}
	uint32_t from = pos;
	process(e, 8);
	CHECK(gf_engine_taps(e) == taps);
	CHECK(err_since(from, h, taps) < 1e-5); /* the running filter, untouched */
}

static void expect_restart(const struct gf_config_source *o, const struct gf_config *cfg, struct gf_engine *e,
			   const char *want)
{
	struct gf_reload_result r;
	struct gf_config *next = NULL;
	CHECK_OK(gf_reload(o, cfg, e, 100, &next, &r));
	printf("  %s\n", r.text);
	CHECK(r.outcome == GF_RELOAD_RESTART && next != NULL && r.taps == 63);
	if (!strstr(r.text, want)) {
		fprintf(stderr, "'%s' does not mention '%s'\n", r.text, want);
		exit(1);
	}
	gf_config_free(next);
	CHECK(!e || !gf_engine_swap_pending(e)); /* nothing was published */
}

static void restarts(const struct gf_config_source *o, const struct gf_config *cfg, struct gf_engine *e)
{
	write_conf_full("a.txt", 44100, BLOCK, 0.0, "");
	expect_restart(o, cfg, e, "sample rate 48000 -> 44100");
	write_conf_full("a.txt", 48000, 128, 0.0, "");
	expect_restart(o, cfg, e, "block 64 -> 128");
	write_conf("a.txt", "output = { device = \"other\"; };");
	expect_restart(o, cfg, e, "output device default -> other");
	write_conf("a.txt", "input = { channels = 1; };");
	expect_restart(o, cfg, e, "input channels 2 -> 1");
	write_conf_full("a.txt", 48000, BLOCK, 20.0, "");
	expect_restart(o, cfg, e, "crossfade 0 ms -> 20 ms");
	write_conf("a.txt", "latency_slack = 2;");
	expect_restart(o, cfg, e, "latency_slack auto -> 2");
	write_conf("a.txt", "");
	expect_restart(o, cfg, NULL, "audio not running"); /* no engine running: restart */
	uint32_t from = pos;
	process(e, 8);
	CHECK(err_since(from, ha_taps, 63) < 1e-5);
}

struct runner {
	struct gf_engine *e;
	uint32_t blocks;
};

static void *run_audio(void *arg)
{
	struct runner *rn = arg;
	usleep(50000); /* let the reload start waiting first */
	process(rn->e, rn->blocks);
	return NULL;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	rng = gf_test_seed("test_reload");
	char *d = gf_test_tmpdir("reload");
	snprintf(dir, sizeof(dir), "%s", d);
	free(d);
	snprintf(conf, sizeof(conf), "%s/gpufir.conf", dir);
	x = malloc(sizeof(float) * FRAMES * CH);
	y = malloc(sizeof(float) * FRAMES * CH);
	CHECK(x && y);
	gf_test_fill_noise(x, (size_t)FRAMES * CH, &rng);
	float *ha = ha_taps, *hb = hb_taps, *hc = hc_taps;
	write_taps("a.txt", ha, 63);
	write_taps("b.txt", hb, 255);
	write_taps("c.txt", hc, 4095);
	write_conf("a.txt", "");

	struct gf_config_source o = {.path = conf};
	struct gf_config *cfg = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_reload_load_config(&o, &cfg, &eb), &eb);
	struct gf_engine *e = engine_for(cfg);
	process(e, 20);
	CHECK(err_since(0, ha, 63) < 1e-5);

	/* A good reload: the next block already uses b.txt (crossfade 0), with history. */
	struct gf_reload_result r;
	struct gf_config *next = NULL;
	write_conf("b.txt", "");
	CHECK_OK(gf_reload(&o, cfg, e, 100, &next, &r));
	printf("  %s\n", r.text);
	CHECK(r.outcome == GF_RELOAD_APPLIED && r.taps == 255 && next);
	CHECK(strstr(r.text, "255 taps") != NULL);
	gf_config_free(cfg);
	cfg = next;
	uint32_t from = pos;
	process(e, 20);
	CHECK(gf_engine_taps(e) == 255);
	CHECK(err_since(from, hb, 255) < 1e-5);

	/* Broken configs: the running filter (b.txt) stays. */
	write_text("gpufir.conf", "sample_rate = 48000;\nblock_frames = 64;\nfilters = ( { name = ; } );\n");
	expect_failure(&o, cfg, e, "gpufir.conf:3", hb, 255);
	write_conf("missing.txt", "");
	expect_failure(&o, cfg, e, "missing.txt", hb, 255);
	write_text("nan.txt", "0.5\n0.25\nnan\n0.125\n");
	write_conf("nan.txt", "");
	expect_failure(&o, cfg, e, "nan.txt:3", hb, 255);
	write_text("inf.txt", "0.5\n1e39\n"); /* finite as a double, Inf as a float */
	write_conf("inf.txt", "");
	{
		struct gf_reload_result ri;
		CHECK(gf_reload(&o, cfg, e, 100, &next, &ri) != 0 && next == NULL);
		printf("  %s\n", ri.text);
		CHECK(ri.outcome == GF_RELOAD_FAILED && strstr(ri.text, "gpufir.conf") != NULL);
	}
	/* Fixing the file applies it. */
	write_conf("a.txt", "");
	CHECK_OK(gf_reload(&o, cfg, e, 100, &next, &r));
	CHECK(r.outcome == GF_RELOAD_APPLIED && r.taps == 63);
	gf_config_free(cfg);
	cfg = next;
	from = pos;
	process(e, 8);
	CHECK(err_since(from, ha, 63) < 1e-5);

	/* Stream settings: flagged, not applied. */
	restarts(&o, cfg, e);
	gf_engine_free(e);
	gf_config_free(cfg);

	/* With a crossfade, a second reload must wait for the first swap to finish. */
	write_conf_full("a.txt", 48000, BLOCK, 10.0, "");
	CHECK_OK_EB(gf_reload_load_config(&o, &cfg, &eb), &eb);
	e = engine_for(cfg);
	pos = 0; /* a fresh engine: the reference starts over */
	process(e, 4);
	write_conf_full("b.txt", 48000, BLOCK, 10.0, "");
	CHECK_OK(gf_reload(&o, cfg, e, 100, &next, &r));
	CHECK(r.outcome == GF_RELOAD_APPLIED);
	gf_config_free(next);
	write_conf_full("c.txt", 48000, BLOCK, 10.0, "");
	CHECK(gf_reload(&o, cfg, e, 50, &next, &r) == GF_E_BUSY); /* no audio: never finishes */
	printf("  %s\n", r.text);
	CHECK(r.outcome == GF_RELOAD_FAILED && strstr(r.text, "in progress") && next == NULL);
	struct runner rn = {e, 40};
	pthread_t t;
	CHECK(pthread_create(&t, NULL, run_audio, &rn) == 0);
	CHECK_OK(gf_reload(&o, cfg, e, 5000, &next, &r)); /* audio finishes b, then c goes in */
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(r.outcome == GF_RELOAD_APPLIED && r.taps == 4095);
	gf_config_free(next);
	process(e, 10); /* the rest of c's crossfade */
	from = pos;
	process(e, 10);
	gf_engine_reap(e);
	CHECK(gf_engine_taps(e) == 4095);
	CHECK(err_since(from, hc, 4095) < 1e-5);

	gf_engine_free(e);
	gf_config_free(cfg);
	free(x);
	free(y);
	gf_test_rmtree(dir);
	puts("test_reload: ok");
	return 0;
}
