/* The daemon's reload path (reload.c), driven through the functions daemon.c
 * calls, in its order: the build thread's job (gf_reload_job_run), then on
 * the control thread gf_reload_job_next and gf_reload_job_swap, whose retry
 * policy for a swap still crossfading is the daemon's.
 *
 * Start-up is a job with nothing running: it brings the engine. A good config
 * is APPLIED and swapped in (the engine's output becomes the new filter's
 * reference convolution); a broken one (syntax error, missing file, NaN or
 * Inf tap, a WAV impulse response cut short) keeps the running filter and
 * says FILE:LINE; a change of stream settings is a RESTART whose engine the
 * job built; a stream that went away, or a stuck worker that forced the CPU
 * backend, while the job ran makes it build the engine it now needs; a swap
 * behind a crossfade is retried, then succeeds, or gives up after
 * crossfade_ms + GF_RELOAD_SWAP_GRACE_MS. A new FIR alone leaves the noise
 * suppressor running; adding, removing or changing it restarts the stream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine.h"
#include "filter_set.h"
#include "reload.h"
#include "sndutil.h"
#include "testutil.h"

#define CH 2
#define BLOCK 64
#define FRAMES (BLOCK * 400)

static char dir[512], conf[600];
static struct gf_config_source src;
static uint64_t rng;
static float *x, *y; /* whole input and output, interleaved */
static uint32_t pos; /* frames processed so far */
static float ha[63], hb[255], hc[4095];

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

/* Frames [from, to) of @p out against filter @p h (on every channel) over the input from frame 0. */
static double err_of(const float *out, uint32_t from, uint32_t to, const float *h, uint32_t taps)
{
	double *ref = gf_test_reference_mono_filter(x, to, CH, h, taps);
	double e = gf_test_rel_l2_frames(out, ref, from, to, CH);
	free(ref);
	return e;
}

/* The running engine's output since frame @p from: filter @p h's. */
static double err_since(uint32_t from, const float *h, uint32_t taps)
{
	return err_of(y, from, pos, h, taps);
}

/* A new engine (nothing run through it yet) filters with @p h. */
static void check_fresh_engine(struct gf_engine *e, const float *h, uint32_t taps)
{
	float *out = malloc(sizeof(float) * 8 * BLOCK * CH);
	CHECK(out);
	for (uint32_t b = 0; b < 8; b++)
		CHECK_OK(gf_engine_process(e, x + (size_t)b * BLOCK * CH, out + (size_t)b * BLOCK * CH,
					   BLOCK));
	CHECK(gf_engine_taps(e) == taps && err_of(out, 0, 8 * BLOCK, h, taps) < 1e-5);
	free(out);
}

/* The build thread's part, as the daemon's build thread runs it. */
static int run_job(struct gf_reload_job *j, const struct gf_config *running, int engine_running,
		   int force_cpu)
{
	gf_reload_job_init(j, &src, running, engine_running, force_cpu);
	int err = gf_reload_job_run(j);
	if (j->r.text[0]) /* APPLIED says nothing until it is swapped in */
		printf("  %s\n", j->r.text);
	CHECK(err == j->err && j->r.err == err);
	return err;
}

static void want_text(const struct gf_reload_job *j, const char *want)
{
	if (!strstr(j->r.text, want)) {
		fprintf(stderr, "'%s' does not mention '%s'\n", j->r.text, want);
		exit(1);
	}
}

/* A good reload while audio runs: built, swapped in on the first try, the
 * new config taken; the next block already uses it (crossfade 0), with history. */
static void expect_applied(struct gf_config **cfg, struct gf_engine *e, const float *h, uint32_t taps)
{
	struct gf_reload_job j;
	CHECK_OK(run_job(&j, *cfg, 1, 0));
	CHECK(j.r.outcome == GF_RELOAD_APPLIED && j.r.taps == taps && !j.engine && j.cfg);
	CHECK(gf_reload_job_next(&j, 1, 0) == GF_RELOAD_NEXT_SWAP);
	CHECK(gf_reload_job_swap(&j, e, 1000) == 0);
	printf("  %s\n", j.r.text);
	CHECK(j.err == 0 && j.r.outcome == GF_RELOAD_APPLIED);
	char want[32];
	snprintf(want, sizeof(want), "%u taps", taps);
	want_text(&j, want);
	gf_config_free(*cfg);
	*cfg = j.cfg;
	j.cfg = NULL;
	gf_reload_job_clear(&j);
	uint32_t from = pos;
	process(e, 20);
	CHECK(gf_engine_taps(e) == taps && err_since(from, h, taps) < 1e-5);
}

/*
 * A mixer of as many outputs as inputs (M/S: out 0 = f(L) + f(R), out 1 = L - R) replaces the
 * running plain filter by a swap, exact from the next block; one of more outputs than inputs
 * (a crossover) changes the stream's output channels: a restart, with an engine of 4 outputs
 * built; output.channels that contradicts the mixer is refused with the reason. The running
 * mixer stays meanwhile.
 */
static void mixer_reloads(struct gf_config **cfg, struct gf_engine *e)
{
	static const char *const head =
		"sample_rate = 48000;\nblock_frames = 64;\nbackend = \"cpu\";\ncrossfade_ms = 0.0;\n"
		"filters = ( { name = \"f\"; file = \"a.txt\"; format = \"text\"; } );\n";
	char text[1024];
	snprintf(text, sizeof(text),
		 "%smixer = { inputs = 2; outputs = 2; paths = ( { in = 0; out = 0; chain = [\"f\"]; },\n"
		 " { in = 1; out = 0; chain = [\"f\"]; }, { in = 0; out = 1; }, { in = 1; out = 1; invert = "
		 "true; } ); "
		 "};\n",
		 head);
	write_text("gpufir.conf", text);
	struct gf_reload_job j;
	CHECK_OK(run_job(&j, *cfg, 1, 0));
	CHECK(j.r.outcome == GF_RELOAD_APPLIED && gf_filter_set_is_mixer(j.fs));
	struct gf_filter_set *fs;
	CHECK_OK(gf_filter_set_dup(&fs, j.fs));
	CHECK(gf_reload_job_next(&j, 1, 0) == GF_RELOAD_NEXT_SWAP);
	CHECK(gf_reload_job_swap(&j, e, 1000) == 0 && j.err == 0);
	gf_config_free(*cfg);
	*cfg = j.cfg;
	j.cfg = NULL;
	gf_reload_job_clear(&j);
	uint32_t from = pos;
	process(e, 20);
	double *ref = gf_test_reference_mix(x, pos, fs);
	CHECK(gf_test_rel_l2_frames(y, ref, from, pos, CH) < 1e-5);
	free(ref);

	snprintf(text, sizeof(text),
		 "%smixer = { inputs = 2; outputs = 4; paths = ( { in = 0; out = 0; }, { in = 1; out = 3; } "
		 "); };\n",
		 head);
	write_text("gpufir.conf", text);
	CHECK_OK(run_job(&j, *cfg, 1, 0));
	CHECK(j.r.outcome == GF_RELOAD_RESTART && j.engine && gf_engine_out_channels(j.engine) == 4);
	want_text(&j, "output channels 2 -> 4");
	CHECK(gf_reload_job_next(&j, 1, 0) == GF_RELOAD_NEXT_RESTART);
	gf_reload_job_clear(&j);
	CHECK(!gf_engine_swap_pending(e)); /* the running mixer stays until the restart */

	snprintf(text, sizeof(text),
		 "%soutput = { channels = 3; };\nmixer = { inputs = 2; outputs = 4; paths = ( { in = 0; out "
		 "= 0; }, { in = 1; out = 3; } ); };\n",
		 head);
	write_text("gpufir.conf", text);
	CHECK(run_job(&j, *cfg, 1, 0) == GF_E_CONFIG && !j.fs && j.r.outcome == GF_RELOAD_FAILED);
	want_text(&j, "mixer.outputs: the mixer writes 4 channels, output.channels says 3");
	gf_reload_job_clear(&j);
	/* A plain chain writes its input's channels: any other output.channels is refused too. */
	snprintf(text, sizeof(text), "%soutput = { channels = 3; };\nchain = [\"f\"];\n", head);
	write_text("gpufir.conf", text);
	CHECK(run_job(&j, *cfg, 1, 0) == GF_E_CONFIG && !j.fs && j.r.outcome == GF_RELOAD_FAILED);
	want_text(&j, "output.channels = 3, but the filter writes 2 channels (as many as input.channels)");
	gf_reload_job_clear(&j);
	from = pos;
	process(e, 8);
	ref = gf_test_reference_mix(x, pos, fs);
	CHECK(gf_test_rel_l2_frames(y, ref, from, pos, CH) < 1e-5);
	free(ref);
	gf_filter_set_free(fs);
}

/* A broken config: the job fails and says why; the running filter @p h stays. */
static void expect_failure(const struct gf_config *cfg, struct gf_engine *e, const char *want, const float *h,
			   uint32_t taps)
{
	struct gf_reload_job j;
	CHECK(run_job(&j, cfg, 1, 0) != 0);
	CHECK(j.r.outcome == GF_RELOAD_FAILED && !j.fs && !j.engine);
	CHECK(strncmp(j.r.text, "reload failed: ", 15) == 0);
	want_text(&j, want);
	CHECK(gf_reload_job_next(&j, 1, 0) == GF_RELOAD_NEXT_REPORT);
	gf_reload_job_clear(&j);
	CHECK(!gf_engine_swap_pending(e)); /* nothing was published */
	uint32_t from = pos;
	process(e, 8);
	CHECK(gf_engine_taps(e) == taps && err_since(from, h, taps) < 1e-5);
}

/* A WAV impulse response cut short (an interrupted copy) is refused: b.txt stays. */
static void truncated_ir(const struct gf_config *cfg, struct gf_engine *e)
{
	char *cut = gf_test_path(dir, "cut.wav");
	gf_test_write_cut_sound(cut, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 1, 4095, hc, 1000);
	write_text("gpufir.conf", "sample_rate = 48000;\nblock_frames = 64;\nbackend = \"cpu\";\n"
				  "filters = ( { name = \"f\"; file = \"cut.wav\"; } );\nchain = [\"f\"];\n");
	printf("reload with a WAV IR cut after 1000 of its 4095 frames:\n");
	expect_failure(cfg, e, "cut.wav: truncated: header says 4095 frames, 1000 read", hb, 255);
	free(cut);
}

/* Stream settings changed: a RESTART, whose engine (of the new config) the job built. */
static void expect_restart(const struct gf_config *cfg, int engine_running, struct gf_engine *e,
			   const char *want)
{
	struct gf_reload_job j;
	CHECK_OK(run_job(&j, cfg, engine_running, 0));
	CHECK(j.r.outcome == GF_RELOAD_RESTART && j.r.taps == 63 && j.cfg && j.engine);
	want_text(&j, "stream restart needed: ");
	want_text(&j, want);
	CHECK(gf_reload_job_next(&j, 1, 0) == GF_RELOAD_NEXT_RESTART);
	if (gf_reload_channels(j.cfg) == CH) /* the input x is of CH channels */
		check_fresh_engine(j.engine, ha, 63);
	else
		CHECK(gf_engine_taps(j.engine) == 63);
	gf_reload_job_clear(&j);
	CHECK(!gf_engine_swap_pending(e)); /* nothing was published */
}

static void restarts(const struct gf_config *cfg, struct gf_engine *e)
{
	write_conf_full("a.txt", 44100, BLOCK, 0.0, "");
	expect_restart(cfg, 1, e, "sample rate 48000 -> 44100");
	write_conf_full("a.txt", 48000, 128, 0.0, "");
	expect_restart(cfg, 1, e, "block 64 -> 128");
	write_conf("a.txt", "output = { device = \"other\"; };");
	expect_restart(cfg, 1, e, "output device default -> other");
	write_conf("a.txt", "input = { channels = 1; };");
	expect_restart(cfg, 1, e, "input channels 2 -> 1");
	write_conf_full("a.txt", 48000, BLOCK, 20.0, "");
	expect_restart(cfg, 1, e, "crossfade 0 ms -> 20 ms");
	write_conf("a.txt", "latency_slack = 2;");
	expect_restart(cfg, 1, e, "latency_slack auto -> 2");
	write_conf("a.txt", "gpu_path = \"auto\";");
	expect_restart(cfg, 1, e, "gpu_path launched -> auto");
	write_conf("a.txt", "");
	expect_restart(cfg, 0, e, "audio not running"); /* no stream running: restart */
	uint32_t from = pos;
	process(e, 8);
	CHECK(err_since(from, ha, 63) < 1e-5);
}

/* The state changed while the job ran: it runs again (the daemon's build
 * thread) for the engine it now needs, and builds only that. */
static void state_changed(const struct gf_config *cfg)
{
	struct gf_reload_job j;
	write_conf("b.txt", "");
	CHECK_OK(run_job(&j, cfg, 1, 0));
	CHECK(j.r.outcome == GF_RELOAD_APPLIED && !j.engine);
	struct gf_filter_set *fs = j.fs;
	CHECK(gf_reload_job_next(&j, 0, 0) == GF_RELOAD_NEXT_ENGINE); /* the stream went away */
	CHECK(j.r.outcome == GF_RELOAD_RESTART);
	want_text(&j, "stream restart needed: audio not running");
	CHECK_OK(gf_reload_job_run(&j));
	CHECK(j.engine && j.fs == fs && gf_reload_job_next(&j, 0, 0) == GF_RELOAD_NEXT_RESTART);
	check_fresh_engine(j.engine, hb, 255);
	/* A stuck worker forced the CPU backend after this engine was built: it is rebuilt.
	 */
	CHECK(!j.engine_cpu && gf_reload_job_next(&j, 0, 1) == GF_RELOAD_NEXT_ENGINE && !j.engine);
	CHECK_OK(gf_reload_job_run(&j));
	CHECK(j.engine && j.engine_cpu && strcmp(gf_engine_backend_name(j.engine), "cpu") == 0);
	CHECK(gf_reload_job_next(&j, 0, 1) == GF_RELOAD_NEXT_RESTART);
	gf_reload_job_clear(&j);

	/* A stuck worker's replacement: a CPU engine of the running config, nothing loaded.
	 */
	gf_reload_job_init(&j, NULL, cfg, 0, 1);
	CHECK_OK(gf_reload_job_run(&j));
	CHECK(!j.cfg && j.engine && j.engine_cpu && j.r.outcome == GF_RELOAD_RESTART);
	check_fresh_engine(j.engine, ha, 63);
	gf_reload_job_clear(&j);
}

/* Start-up: a job with nothing running brings the config and the engine. */
static struct gf_engine *start_up(struct gf_config **cfg)
{
	struct gf_reload_job j;
	CHECK_OK(run_job(&j, NULL, 0, 0));
	CHECK(j.r.outcome == GF_RELOAD_RESTART && j.engine && j.cfg);
	CHECK(atomic_load(&j.loaded) == j.cfg);
	CHECK(gf_reload_job_next(&j, 0, 0) == GF_RELOAD_NEXT_RESTART);
	struct gf_chain_facts f;
	gf_reload_facts(j.cfg, 0, &f);
	struct gf_engine_params p;
	gf_chain_engine_params(j.cfg, &f, j.fs->taps, &p);
	CHECK(p.channels == CH && p.max_block == BLOCK && p.max_taps == GF_CHAIN_DEFAULT_MAX_TAPS &&
	      p.gpu_path == GF_GPU_PATH_LAUNCHED);
	struct gf_engine *e = j.engine;
	*cfg = j.cfg;
	j.engine = NULL;
	j.cfg = NULL;
	gf_reload_job_clear(&j);
	pos = 0; /* a fresh engine: the reference starts over */
	return e;
}

/* With a crossfade, a swap behind the running one is retried on later passes
 * (never waiting) and goes in once audio ends the crossfade; one that audio
 * never lets in fails GF_E_BUSY at crossfade_ms + GF_RELOAD_SWAP_GRACE_MS. */
static void busy_swaps(void)
{
	struct gf_config *cfg;
	struct gf_reload_job j;
	write_conf_full("a.txt", 48000, BLOCK, 10.0, "");
	struct gf_engine *e = start_up(&cfg);
	process(e, 4);
	write_conf_full("b.txt", 48000, BLOCK, 10.0, "");
	CHECK_OK(run_job(&j, cfg, 1, 0));
	CHECK(gf_reload_job_swap(&j, e, 0) == 0 && j.r.outcome == GF_RELOAD_APPLIED); /* b crossfades in */
	gf_reload_job_clear(&j);

	write_conf_full("c.txt", 48000, BLOCK, 10.0, "");
	CHECK_OK(run_job(&j, cfg, 1, 0));
	CHECK(gf_reload_job_swap(&j, e, 100) == 1); /* b still crossfades: no audio ran */
	CHECK(j.swap_until_ms == 100 + 10 + GF_RELOAD_SWAP_GRACE_MS && j.err == 0);
	CHECK(gf_reload_job_swap(&j, e, 600) == 1 && j.r.outcome == GF_RELOAD_APPLIED);
	process(e, 10); /* 640 frames: b's 480-frame crossfade ends */
	CHECK(gf_reload_job_next(&j, 1, 0) == GF_RELOAD_NEXT_SWAP);
	CHECK(gf_reload_job_swap(&j, e, 700) == 0);
	printf("  %s\n", j.r.text);
	CHECK(j.err == 0 && j.r.outcome == GF_RELOAD_APPLIED && j.r.taps == 4095);
	gf_reload_job_clear(&j);

	write_conf_full("a.txt", 48000, BLOCK, 10.0, "");
	CHECK_OK(run_job(&j, cfg, 1, 0));
	CHECK(gf_reload_job_swap(&j, e, 1000) == 1); /* c crossfades, and no audio runs */
	CHECK(gf_reload_job_swap(&j, e, 1000 + 10 + GF_RELOAD_SWAP_GRACE_MS - 1) == 1);
	CHECK(gf_reload_job_swap(&j, e, 1000 + 10 + GF_RELOAD_SWAP_GRACE_MS) == 0);
	printf("  %s\n", j.r.text);
	CHECK(j.err == GF_E_BUSY && j.r.outcome == GF_RELOAD_FAILED && strstr(j.r.text, "in progress"));
	CHECK(gf_reload_job_next(&j, 1, 0) == GF_RELOAD_NEXT_REPORT);
	gf_reload_job_clear(&j);
	process(e, 10); /* the rest of c's crossfade */
	uint32_t from = pos;
	process(e, 10);
	gf_engine_reap(e);
	CHECK(gf_engine_taps(e) == 4095 && err_since(from, hc, 4095) < 1e-5); /* c, not a */
	gf_engine_free(e);
	gf_config_free(cfg);
}

/* A config of taps file @p taps, with the suppressor's settings @p nr ("": none). */
static void write_conf_nr(const char *taps, const char *nr)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "sample_rate = 48000;\nblock_frames = %d;\nbackend = \"cpu\";\n"
		 "filters = (\n  { name = \"f\"; file = \"%s\"; format = \"text\"; "
		 "}%s%s%s\n);\n"
		 "chain = [\"f\"%s];\n",
		 BLOCK, taps, nr[0] ? ",\n  { name = \"nr\"; design = \"suppress\"; " : "", nr,
		 nr[0] ? " }" : "", nr[0] ? ", \"nr\"" : "");
	write_text("gpufir.conf", text);
}

/*
 * The noise suppressor across reloads: a new FIR alone is swapped in and the
 * running suppressor runs on (the job makes none); adding, removing or
 * changing the suppressor restarts the stream, with the new one made by the
 * job beside the new engine.
 */
static void suppressor_reloads(void)
{
	struct gf_config *running;
	struct gf_errbuf eb = {{0}};
	write_conf_nr("a.txt", "reduction_db = 18.0;");
	CHECK_OK_EB(gf_reload_load_config(&src, &running, &eb), &eb);
	struct gf_reload_job j;
	printf("reloads with a suppressor running:\n");
	write_conf_nr("b.txt", "reduction_db = 18.0;");
	CHECK_OK(run_job(&j, running, 1, 0));
	CHECK(j.r.outcome == GF_RELOAD_APPLIED && !j.engine && !j.suppress);
	printf("  b.txt, the same suppressor: applied, the suppressor runs on\n");
	gf_reload_job_clear(&j);
	/* the live settings alone: applied, the running suppressor takes them (daemon_suppress.c) */
	static const char *const live[] = {"reduction_db = 12.0;", "reduction_db = 18.0; bypass = true;"};
	for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++) {
		write_conf_nr("a.txt", live[i]);
		CHECK_OK(run_job(&j, running, 1, 0));
		CHECK(j.r.outcome == GF_RELOAD_APPLIED && !j.engine && !j.suppress);
		printf("  %s: applied live\n", live[i]);
		gf_reload_job_clear(&j);
	}
	static const struct {
		const char *nr, *why;
	} changes[] = {
		{"reduction_db = 12.0; highpass_hz = 30.0;", "suppressor highpass_hz 0 -> 30"},
		{"", "suppressor on channel 0 removed"},
	};
	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		write_conf_nr("a.txt", changes[i].nr);
		CHECK_OK(run_job(&j, running, 1, 0));
		CHECK(j.r.outcome == GF_RELOAD_RESTART && j.engine);
		want_text(&j, changes[i].why);
		CHECK(!!j.suppress == !!changes[i].nr[0]);
		CHECK(!j.suppress ||
		      (gf_suppress_bank_latency(j.suppress) > 0 &&
		       gf_suppress_bank_latency(j.suppress) <= GF_SUPPRESS_MAX_FRAME_S * 48000));
		gf_reload_job_clear(&j);
	}
	gf_config_free(running);
	write_conf_nr("a.txt", "");
	CHECK_OK_EB(gf_reload_load_config(&src, &running, &eb), &eb);
	write_conf_nr("a.txt", "reduction_db = 18.0;");
	CHECK_OK(run_job(&j, running, 1, 0));
	CHECK(j.r.outcome == GF_RELOAD_RESTART && j.engine && j.suppress);
	want_text(&j, "suppressor on channel 0 added");
	gf_reload_job_clear(&j);
	gf_config_free(running);
}

/* A config of taps a.txt with the neural stage's settings @p dfn (nothing loads its model here). */
static void write_conf_dfn(const char *dfn)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "sample_rate = 48000;\nblock_frames = %d;\nbackend = \"cpu\";\n"
		 "filters = (\n  { name = \"f\"; file = \"a.txt\"; format = \"text\"; },\n"
		 "  { name = \"dfn\"; design = \"deepfilter\"; model = \"m.dfn\"; %s }\n);\n"
		 "chain = [\"f\", \"dfn\"];\n",
		 BLOCK, dfn);
	write_text("gpufir.conf", text);
}

/*
 * The neural stage across reloads: atten_lim_db and bypass alone are applied to the running stage
 * (the job makes no engine and no stage, so no model is loaded); post_filter_beta needs a new one.
 */
static void neural_reloads(void)
{
	struct gf_config *running;
	struct gf_errbuf eb = {{0}};
	write_text("m.dfn", "model\n");
	write_conf_dfn("atten_lim_db = 30.0;");
	CHECK_OK_EB(gf_reload_load_config(&src, &running, &eb), &eb);
	struct gf_reload_job j;
	printf("reloads with a neural stage running:\n");
	static const char *const live[] = {"atten_lim_db = 12.0;", "atten_lim_db = 30.0; bypass = true;",
					   "atten_lim_db = 100.0; bypass = true;"};
	for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++) {
		write_conf_dfn(live[i]);
		CHECK_OK(run_job(&j, running, 1, 0));
		CHECK(j.r.outcome == GF_RELOAD_APPLIED && !j.engine && !j.suppress);
		printf("  %s: applied live\n", live[i]);
		gf_reload_job_clear(&j);
	}
	write_conf_dfn("atten_lim_db = 30.0; post_filter_beta = 0.02;");
	run_job(&j, running, 1, 0); /* builds a new stage: the model here is no model, so it fails */
	CHECK(j.r.outcome != GF_RELOAD_APPLIED);
	printf("  post_filter_beta: not live (%s)\n", j.r.text);
	gf_reload_job_clear(&j);
	gf_config_free(running);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	rng = gf_test_seed("test_reload");
	char *d = gf_test_tmpdir("reload");
	snprintf(dir, sizeof(dir), "%s", d);
	free(d);
	snprintf(conf, sizeof(conf), "%s/gpufir.conf", dir);
	src.path = conf;
	x = malloc(sizeof(float) * FRAMES * CH);
	y = malloc(sizeof(float) * FRAMES * CH);
	CHECK(x && y);
	gf_test_fill_noise(x, (size_t)FRAMES * CH, &rng);
	write_taps("a.txt", ha, 63);
	write_taps("b.txt", hb, 255);
	write_taps("c.txt", hc, 4095);
	write_conf("a.txt", "");

	struct gf_config *cfg;
	struct gf_engine *e = start_up(&cfg);
	process(e, 20);
	CHECK(err_since(0, ha, 63) < 1e-5);

	write_conf("b.txt", "");
	expect_applied(&cfg, e, hb, 255);

	/* Broken configs: the running filter (b.txt) stays. */
	write_text("gpufir.conf", "sample_rate = 48000;\nblock_frames = 64;\nfilters = ( { name = ; } );\n");
	expect_failure(cfg, e, "gpufir.conf:3", hb, 255);
	write_conf("missing.txt", "");
	expect_failure(cfg, e, "missing.txt", hb, 255);
	write_text("nan.txt", "0.5\n0.25\nnan\n0.125\n");
	write_conf("nan.txt", "");
	expect_failure(cfg, e, "nan.txt:3", hb, 255);
	write_text("inf.txt", "0.5\n1e39\n"); /* finite as a double, Inf as a float */
	write_conf("inf.txt", "");
	expect_failure(cfg, e, "gpufir.conf", hb, 255);
	truncated_ir(cfg, e);

	/* Fixing the file applies it. */
	write_conf("a.txt", "");
	expect_applied(&cfg, e, ha, 63);

	restarts(cfg, e);
	state_changed(cfg);
	mixer_reloads(&cfg, e);
	gf_engine_free(e);
	gf_config_free(cfg);

	busy_swaps();
	suppressor_reloads();
	neural_reloads();
	free(x);
	free(y);
	gf_test_rmtree(dir);
	puts("test_reload: ok");
	return 0;
}
