/* Live streaming against a real audio server: JACK with its dummy driver,
 * through PortAudio's JACK host API (see docs/live.md, TESTING notes).
 *
 * A player client feeds noise plus a counting ramp into gpufir's inputs, a
 * recorder client records gpufir's outputs, in the same JACK cycle (no
 * feedback loop). The recording must be the reference convolution delayed by
 * exactly the latency gpufir reports (found by cross-correlation), window by
 * window, and gpufir's own xrun counters must stay at zero. The same run
 * records a WAV file, which must be aligned with the capture position at
 * which the player started. Further cases: capture and playback as two
 * streams; recording only (no playback device); device trouble (a stalled
 * server, then a server that quits).
 *
 * Uses the server in JACK_DEFAULT_SERVER (scripts/with-jackd.sh), else starts
 * a private one. GPUFIR_TEST_BACKEND=cuda runs the GPU backend (77 without a
 * GPU); GPUFIR_LIVE_SECONDS sets the length of the recorded signal (20). */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "daemon.h"
#include "engine.h"
#include "error.h"
#include "filter_set.h"
#include "jackplay.h"
#include "live_check.h"
#include "live.h"
#include "live_internal.h" /* GF_LIVE_WARMUP_BLOCKS */
#include "testutil.h"

#define RATE LIVE_CHECK_RATE
#define CH LIVE_CHECK_CH
#define BLOCK 64u
#define TAPS 255u
#define WINDOW LIVE_CHECK_WINDOW

static enum gf_backend_kind backend = GF_BACKEND_CPU;
static unsigned slack; /* latency_slack: gf_test_latency_slack() */

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Noise plus a counting ramp (a different phase per channel), so any lost,
 * repeated or swapped frame changes the output. */
static float *make_signal(uint32_t frames, uint64_t *seed)
{
	float *x = malloc((size_t)frames * CH * sizeof(float));
	CHECK(x);
	for (uint32_t n = 0; n < frames; n++)
		for (uint32_t c = 0; c < CH; c++) {
			float ramp = (float)((n + 1000u * c) % 4096u) / 4096.0f - 0.5f;
			x[(size_t)n * CH + c] = 0.4f * gf_test_randf(seed) + 0.2f * ramp;
		}
	return x;
}

/* Config text: JACK "system" device, one inline non-symmetric FIR. */
static char *make_config(const float *taps, int playback, const char *wav)
{
	size_t cap = 4096 + (size_t)TAPS * 24;
	char *s = malloc(cap);
	CHECK(s);
	int n = snprintf(s, cap,
			 "sample_rate = %u;\nblock_frames = %u;\nbackend = \"%s\";\nlatency_slack = %u;\n"
			 "input = { device = \"system\"; host_api = \"JACK\"; channels = %u; };\n"
			 "output = { %s %s%s%s };\n"
			 "filters = ( { name = \"fir\"; coeffs = [",
			 RATE, BLOCK, backend == GF_BACKEND_CUDA ? "cuda" : "cpu", slack, CH,
			 playback ? "device = \"system\"; host_api = \"JACK\";" : "", wav ? "file = \"" : "",
			 wav ? wav : "", wav ? "\";" : "");
	for (uint32_t k = 0; k < TAPS; k++)
		n += snprintf(s + n, cap - (size_t)n, "%s%.9e", k ? ", " : "", (double)taps[k]);
	snprintf(s + n, cap - (size_t)n, "]; } );\nchain = [\"fir\"];\n");
	return s;
}

/* gf_live_new with the stream settings of @p cfg, as the daemon opens it. */
static int live_new_from(struct gf_live **l, const struct gf_config *cfg, struct gf_engine *e,
			 struct gf_errbuf *eb)
{
	struct gf_live_params lp;
	gf_daemon_live_params(cfg, &lp);
	return gf_live_new(l, &lp, e, eb);
}

struct setup {
	struct gf_config *cfg;
	struct gf_filter_set *fs;
	struct gf_engine *engine;
	struct gf_live *live;
};

static void setup_open(struct setup *st, const float *taps, int playback, const char *wav)
{
	struct gf_errbuf eb = {{0}};
	memset(st, 0, sizeof(*st));
	char *text = make_config(taps, playback, wav);
	CHECK_OK_EB(gf_config_load_string(text, ".", &st->cfg, &eb), &eb);
	free(text);
	CHECK_OK_EB(gf_config_build(st->cfg, RATE, CH, &st->fs, &eb), &eb);
	CHECK(st->fs->taps == TAPS);
	struct gf_engine_params p = {
		.backend = backend, .channels = CH, .max_block = BLOCK, .max_taps = TAPS};
	int err = gf_engine_new(&st->engine, &p, st->fs, &eb);
	if (err && backend == GF_BACKEND_CUDA && (err == GF_E_NOGPU || err == GF_E_UNSUPPORTED))
		gf_test_skip(eb.msg);
	CHECK_OK_EB(err, &eb);
	CHECK_OK_EB(live_new_from(&st->live, st->cfg, st->engine, &eb), &eb);
	CHECK_OK_EB(gf_live_start(st->live, &eb), &eb);
}

static void setup_close(struct setup *st)
{
	gf_live_free(st->live);
	gf_engine_free(st->engine);
	gf_filter_set_free(st->fs);
	gf_config_free(st->cfg);
}

static void print_stats(const char *what, const struct gf_live_stats *s)
{
	printf("%s: blocks %llu, latency %u frames (%.2f ms), device period %u; block time median "
	       "%.1f us, p99 %.1f us, max %.1f us; overflows %llu, underflows %llu, late %llu, "
	       "engine errors %llu, PortAudio xrun flags %llu, record errors %llu, dropped %llu\n",
	       what, (unsigned long long)s->blocks, s->latency_frames, 1000.0 * s->latency_frames / RATE,
	       s->device_period, s->block_us_median, s->block_us_p99, s->block_us_max,
	       (unsigned long long)s->input_overflows, (unsigned long long)s->output_underflows,
	       (unsigned long long)s->late_blocks, (unsigned long long)s->engine_errors,
	       (unsigned long long)s->device_xruns, (unsigned long long)s->record_errors,
	       (unsigned long long)s->record_dropped);
	if (s->margin_frames_worst != INT32_MAX) /* else no playback */
		printf("%s: playback margin worst %d frames\n", what, (int)s->margin_frames_worst);
	printf("%s: worker wake-up worst %.1f us, callback interval worst %.1f us\n", what, s->wake_us_worst,
	       s->callback_gap_us_worst);
}

static void check_clean(const struct gf_live_stats *s)
{
	CHECK(s->input_overflows == 0);
	CHECK(s->output_underflows == 0);
	CHECK(s->output_overflows == 0);
	/* Every block reached playback before the device needed it. A late block
	 * (engine time over the period) is not asserted on: a virtual machine's
	 * host can deschedule the worker mid-block, and the slack absorbs it. */
	CHECK(s->margin_frames_worst >= 0);
	CHECK(s->wake_us_worst < 60e6 && s->callback_gap_us_worst < 60e6); /* durations, not wrapped */
	CHECK(s->engine_errors == 0);
	CHECK(s->record_errors == 0 && s->record_dropped == 0);
}

static _Atomic uint64_t start_capture_pos;
static void on_play_start(void *arg)
{
	/* In the player's JACK cycle, which runs before gpufir's in the same
	 * cycle: capture position == the recorded frame that gets signal frame 0. */
	atomic_store(&start_capture_pos, gf_live_capture_position(arg));
}

/* Play the signal through gpufir, calling gf_engine_reap() on @p st's engine
 * as the daemon's control loop does. @return the rig (recording stopped). */
static struct gf_jack_rig *run_signal(struct setup *st, const float *x, uint32_t frames, int playback,
				      const float **rec, uint32_t *rec_frames)
{
	struct gf_live *live = st->live;
	struct gf_jack_rig *rig = gf_jack_rig_open(CH, frames + 5 * RATE);
	CHECK(rig);
	CHECK(gf_jack_rig_connect(rig, "gpufir", playback) == 0);
	sleep_ms(200); /* let the new graph order settle */
	gf_jack_rig_record(rig);
	sleep_ms(100);
	gf_jack_rig_play(rig, x, frames, on_play_start, live);
	/* The signal's length and 20 s: a server that stops running the player
	 * (a zombified client) fails here with a reason, not at ctest's timeout. */
	double deadline = gf_now_s() + (double)frames / RATE + 20.0;
	while (!gf_jack_rig_played(rig)) {
		if (gf_now_s() > deadline) {
			fprintf(stderr, "the player never finished its %u frames: JACK stopped running it\n",
				frames);
			CHECK(!"player finished");
		}
		sleep_ms(50);
		gf_engine_reap(st->engine);
	}
	sleep_ms(300); /* latency plus the filter's ring-out */
	*rec_frames = gf_jack_rig_stop_recording(rig, rec);
	return rig;
}

/* Playback (and, with @p dir, a WAV recording at the same time). @p two:
 * capture and playback as two PortAudio streams, the path for devices that
 * cannot share one; their relative phase is then known only to within one
 * device period, so the delay must lie in [latency - period, latency]. */
static void case_playback(uint64_t *seed, uint32_t seconds, const char *dir, int two)
{
	const char *what = two ? "two streams" : "playback";
	uint32_t frames = seconds * RATE;
	float taps[TAPS];
	gf_test_fill_decaying_taps(taps, TAPS, seed);
	float *x = make_signal(frames, seed);
	char wav[512] = "";
	if (dir)
		snprintf(wav, sizeof(wav), "%s/playback.wav", dir);

	struct setup st;
	if (two)
		setenv("GPUFIR_LIVE_TWO_STREAMS", "1", 1);
	setup_open(&st, taps, 1, dir ? wav : NULL);
	unsetenv("GPUFIR_LIVE_TWO_STREAMS");
	const float *rec;
	uint32_t rec_frames;
	struct gf_jack_rig *rig = run_signal(&st, x, frames, 1, &rec, &rec_frames);
	struct gf_live_stats s;
	gf_live_get_stats(st.live, &s);
	CHECK(gf_live_poll(st.live) == 0);
	gf_live_stop(st.live);
	print_stats(what, &s);
	uint32_t period = gf_jack_rig_period(rig);
	long expect = (long)(gf_jack_rig_play_time(rig) - gf_jack_rig_record_time(rig)) + s.latency_frames;
	printf("%s: JACK period %u, JACK xruns %u (not asserted), recorded %u frames\n", what, period,
	       gf_jack_rig_xruns(rig), rec_frames);
	/* Duplex, device period == block: one block of work plus the slack; two
	 * streams: two blocks, both periods, plus the slack (docs/live.md). */
	CHECK(period == BLOCK);
	CHECK(s.latency_frames == (two ? 2 * BLOCK + (2 + slack) * period : BLOCK + slack * period));

	double *ref = malloc((size_t)frames * CH * sizeof(double));
	CHECK(ref);
	gf_test_reference(x, frames, CH, st.fs->coeffs, TAPS, ref);
	long d = live_check_find_delay(rec, rec_frames, ref, rec_frames - frames);
	printf("%s: delay %ld frames by cross-correlation, expected %ld (latency %u)\n", what, d, expect,
	       s.latency_frames);
	if (two)
		CHECK(d <= expect && d >= expect - (long)period);
	else
		CHECK(d == expect);
	live_check_windows(what, rec, rec_frames, d, ref, frames);
	check_clean(&s);

	if (dir) {
		uint32_t wav_frames;
		float *w = live_check_read_wav(wav, &wav_frames);
		long dw = live_check_find_delay(w, wav_frames, ref,
						wav_frames > frames ? wav_frames - frames : 1);
		printf("wav (with playback): %u frames, delay %ld, expected %llu (capture position at "
		       "start)\n",
		       wav_frames, dw, (unsigned long long)atomic_load(&start_capture_pos));
		CHECK((uint64_t)dw == atomic_load(&start_capture_pos));
		live_check_windows("wav (with playback)", w, wav_frames, dw, ref, frames);
		free(w);
		unlink(wav);
	}
	free(ref);
	gf_jack_rig_close(rig);
	setup_close(&st);
	free(x);
}

static void case_record_only(uint64_t *seed, uint32_t seconds, const char *dir)
{
	uint32_t frames = seconds * RATE;
	float taps[TAPS];
	gf_test_fill_decaying_taps(taps, TAPS, seed);
	float *x = make_signal(frames, seed);
	char wav[512];
	snprintf(wav, sizeof(wav), "%s/record.wav", dir);

	struct setup st;
	setup_open(&st, taps, 0, wav);
	const float *rec;
	uint32_t rec_frames;
	struct gf_jack_rig *rig = run_signal(&st, x, frames, 0, &rec, &rec_frames);
	gf_live_stop(st.live); /* drains and closes the file */
	struct gf_live_stats s;
	gf_live_get_stats(st.live, &s);
	print_stats("record", &s);
	check_clean(&s);
	CHECK(s.latency_frames == 0);

	double *ref = malloc((size_t)frames * CH * sizeof(double));
	CHECK(ref);
	gf_test_reference(x, frames, CH, st.fs->coeffs, TAPS, ref);
	uint32_t wav_frames;
	float *w = live_check_read_wav(wav, &wav_frames);
	CHECK(wav_frames == s.record_frames);
	CHECK(wav_frames == s.capture_frames);
	long dw = live_check_find_delay(w, wav_frames, ref, wav_frames > frames ? wav_frames - frames : 1);
	printf("record: %u frames, delay %ld, expected %llu; JACK xruns %u\n", wav_frames, dw,
	       (unsigned long long)atomic_load(&start_capture_pos), gf_jack_rig_xruns(rig));
	CHECK((uint64_t)dw == atomic_load(&start_capture_pos));
	live_check_windows("record", w, wav_frames, dw, ref, frames);

	free(w);
	free(ref);
	gf_jack_rig_close(rig);
	setup_close(&st);
	free(x);
	unlink(wav);
}

/* The backend fails mid-stream (a fault hook: the CUDA backend's with cuda,
 * the engine's otherwise). The stream must keep running without an xrun; the
 * blocks from the failure until the control thread has built the CPU fallback
 * come out as silence, and from then on the output is exact again (the
 * fallback starts from the input history). Only that one stretch may differ
 * from the reference. On CUDA the engine tries the GPU again 2 s after the
 * fallback (the hook is unset by then) and crossfades back to it, exact
 * too, if the signal lasts that long. */
static void case_fallback(uint64_t *seed, uint32_t seconds)
{
	const char *what = "backend fallback";
	const char *hook =
		backend == GF_BACKEND_CUDA ? "GPUFIR_CUDA_FAIL_AFTER" : "GPUFIR_FAULT_PROCESS_AFTER";
	uint32_t frames = seconds * RATE;
	float taps[TAPS];
	gf_test_fill_decaying_taps(taps, TAPS, seed);
	float *x = make_signal(frames, seed);
	/* About a second and a half after the stream starts: inside the signal,
	 * which begins some 0.3 s after the start. */
	char n[32];
	snprintf(n, sizeof(n), "%u", GF_LIVE_WARMUP_BLOCKS + 3 * RATE / (2 * BLOCK));
	CHECK(setenv(hook, n, 1) == 0);
	struct setup st;
	setup_open(&st, taps, 1, NULL);
	CHECK(unsetenv(hook) == 0);
	const char *before = gf_engine_backend_name(st.engine);
	const float *rec;
	uint32_t rec_frames;
	struct gf_jack_rig *rig = run_signal(&st, x, frames, 1, &rec, &rec_frames);
	struct gf_live_stats s;
	gf_live_get_stats(st.live, &s);
	CHECK(gf_live_poll(st.live) == 0); /* the stream never stopped */
	gf_live_stop(st.live);
	print_stats(what, &s);
	struct gf_engine_stats es;
	gf_engine_get_stats(st.engine, &es);
	printf("%s: %s -> %s, %llu fallback, %llu return, %llu blocks muted (%s=%s)\n", what, before,
	       gf_engine_backend_name(st.engine), (unsigned long long)es.fallbacks,
	       (unsigned long long)es.returns, (unsigned long long)s.engine_errors, hook, n);
	CHECK(es.fallbacks == 1 && es.returns <= (backend == GF_BACKEND_CUDA ? 1u : 0u));
	CHECK(strcmp(gf_engine_backend_name(st.engine), es.returns ? before : "cpu") == 0);
	CHECK(s.engine_errors >= 1);
	CHECK(s.input_overflows == 0 && s.output_underflows == 0 && s.output_overflows == 0);

	double *ref = malloc((size_t)frames * CH * sizeof(double));
	CHECK(ref);
	gf_test_reference(x, frames, CH, st.fs->coeffs, TAPS, ref);
	long expect = (long)(gf_jack_rig_play_time(rig) - gf_jack_rig_record_time(rig)) + s.latency_frames;
	long d = live_check_find_delay(rec, rec_frames, ref, rec_frames - frames);
	CHECK(d == expect);
	long first, last;
	live_check_bad_windows(rec, d, ref, frames, &first, &last);
	/* The muted stretch: silence from the failed block to the fallback's first. */
	size_t mute_from = 0, mute_to = 0;
	for (size_t i = (size_t)d; i < (size_t)d + frames; i++) {
		int quiet = rec[i * CH] == 0.0f && rec[i * CH + 1] == 0.0f;
		if (quiet && !mute_from && i > (size_t)d)
			mute_from = i;
		if (!quiet && mute_from && !mute_to)
			mute_to = i;
	}
	printf("%s: windows over %.0e: %ld..%ld of %u; muted %.1f ms from %.2f s into the signal\n", what,
	       LIVE_CHECK_TOL, first, last, (frames + WINDOW - 1) / WINDOW,
	       1000.0 * (double)(mute_to - mute_from) / RATE, (double)(mute_from - (size_t)d) / RATE);
	CHECK(first > 0 && last < (long)((frames - 1) / WINDOW)); /* exact before and after */
	CHECK(mute_from && mute_to > mute_from);
	/* The bad windows are exactly those the muted stretch touches: the
	 * fallback's first block is already exact. */
	CHECK((size_t)first == (mute_from - (size_t)d) / WINDOW);
	CHECK((size_t)last == (mute_to - 1 - (size_t)d) / WINDOW);
	CHECK(mute_to - mute_from <= RATE / 2); /* the control loop reaped within its period */

	free(ref);
	gf_jack_rig_close(rig);
	setup_close(&st);
	free(x);
}

/* Run until blocks flow; @return blocks after @p ms. */
static uint64_t blocks_after(struct gf_live *l, long ms)
{
	sleep_ms(ms);
	struct gf_live_stats s;
	gf_live_get_stats(l, &s);
	return s.blocks;
}

/* gf_live_new refuses a bad setup with a message naming what is wrong. */
static void expect_error(const char *settings, int code, const char *needle)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "%s\nfilters = ( { name = \"f\"; coeffs = [1.0, 0.5]; } );\n"
		 "chain = [\"f\"];\n",
		 settings);
	struct gf_config *cfg;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_load_string(text, ".", &cfg, &eb), &eb);
	struct gf_live *l = NULL;
	int err = live_new_from(&l, cfg, NULL, &eb); /* the engine is not touched before start */
	printf("error case: %d %s\n", err, eb.msg);
	CHECK(err == code && !l);
	CHECK(strstr(eb.msg, needle));
	gf_config_free(cfg);
}

static void case_errors(void)
{
	expect_error("sample_rate = 44100; input = { device = \"system\"; };", GF_E_RATE, "44100 Hz");
	expect_error("sample_rate = 44100; input = { device = \"system\"; };", GF_E_RATE, "'system'");
	expect_error("input = { device = \"no such card\"; };", GF_E_NODEVICE, "no such card");
	expect_error("input = { device = 7; };", GF_E_NODEVICE, "index");
	expect_error("input = { device = \"system\"; host_api = \"ALSA\"; };", GF_E_NODEVICE, "ALSA");
	expect_error("input = { device = \"system\"; channels = 3; };", GF_E_AUDIO, "3 requested");
	expect_error("input = { channels = 2; }; output = { channels = 1; };", GF_E_CONFIG,
		     "output.channels");
}

/* Poll until it reports an error (10 s at most). */
static int poll_error(struct gf_live *l, double *took)
{
	double t0 = gf_now_s();
	int err = 0;
	while (!(err = gf_live_poll(l)) && gf_now_s() - t0 < 10.0)
		sleep_ms(20);
	*took = gf_now_s() - t0;
	return err;
}

/* Device trouble on a private server. (1) The server stalls (SIGSTOP): poll
 * reports it; once it runs again, stop+free and a new stream on the same
 * process work (PortAudio terminated and re-initialized). (2) The server
 * quits: poll reports it at once, stop+free return without blocking, the
 * recording is closed valid, and gf_live_new says a restart is needed. */
static void case_device_loss(uint64_t *seed, const char *dir)
{
	struct gf_jack_server srv;
	char wav[512];
	snprintf(wav, sizeof(wav), "%s/loss.wav", dir);
	CHECK(gf_jack_server_start(&srv, "gpufir-loss", RATE, BLOCK) == 0);
	float taps[TAPS];
	gf_test_fill_decaying_taps(taps, TAPS, seed);
	double took;

	struct setup st;
	setup_open(&st, taps, 1, NULL);
	CHECK(blocks_after(st.live, 300) > 0);
	CHECK(gf_live_poll(st.live) == 0);
	kill(srv.pid, SIGSTOP);
	int err = poll_error(st.live, &took);
	kill(srv.pid, SIGCONT);
	printf("stall: poll reported %d (%s) after %.2f s\n", err, gf_strerror(err), took);
	CHECK(err == GF_E_AUDIO);
	double t0 = gf_now_s();
	setup_close(&st);
	printf("stall: stop+free took %.2f s\n", gf_now_s() - t0);
	CHECK(!gf_live_restart_required());
	setup_open(&st, taps, 1, NULL);
	uint64_t b1 = blocks_after(st.live, 300), b2 = blocks_after(st.live, 300);
	printf("stall: new stream in the same process ran %llu then %llu blocks\n", (unsigned long long)b1,
	       (unsigned long long)b2);
	CHECK(b1 > 0 && b2 > b1);
	CHECK(gf_live_poll(st.live) == 0);
	setup_close(&st);

	setup_open(&st, taps, 1, wav);
	CHECK(blocks_after(st.live, 500) > 0);
	gf_jack_server_stop(&srv, SIGTERM); /* SIGKILL would leak its JACK registry entry */
	err = poll_error(st.live, &took);
	printf("server gone: poll reported %d (%s) after %.2f s\n", err, gf_strerror(err), took);
	CHECK(err == GF_E_AUDIO);
	t0 = gf_now_s();
	gf_live_free(st.live);
	st.live = NULL;
	took = gf_now_s() - t0;
	printf("server gone: stop+free took %.2f s\n", took);
	CHECK(took < 5.0);
	CHECK(gf_live_restart_required());
	uint32_t wav_frames;
	free(live_check_read_wav(wav, &wav_frames)); /* closed cleanly: a valid WAV */
	printf("server gone: recording closed with %u frames\n", wav_frames);
	CHECK(wav_frames > 0);
	unlink(wav);
	struct gf_errbuf eb = {{0}};
	struct gf_live *l = NULL;
	CHECK(live_new_from(&l, st.cfg, st.engine, &eb) == GF_E_AUDIO && !l);
	printf("server gone: gf_live_new: %s\n", eb.msg);
	setup_close(&st);
}

int main(void)
{
	/* Line by line: a case that hangs until ctest's timeout shows where it stood. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	uint64_t seed = gf_test_seed("test_live_jack");
	slack = gf_test_latency_slack();
	const char *be = getenv("GPUFIR_TEST_BACKEND");
	if (be && strcmp(be, "cuda") == 0)
		backend = GF_BACKEND_CUDA;
	const char *secs = getenv("GPUFIR_LIVE_SECONDS");
	uint32_t seconds = secs ? (uint32_t)atoi(secs) : 20;
	if (seconds < 1)
		seconds = 1;

	struct gf_jack_server own = {0};
	if (!getenv("JACK_DEFAULT_SERVER")) {
		if (gf_jack_server_start(&own, "gpufir-test", RATE, BLOCK) != 0)
			gf_test_skip("cannot start a private JACK server (is jackd installed?)");
	}
	char *dir = gf_test_tmpdir("live_jack");
	printf("devices as PortAudio sees them:\n");
	fflush(stdout);
	CHECK_OK(gf_live_list_devices(stdout));

	const char *only = getenv("GPUFIR_LIVE_CASES"); /* e.g. "loss" while debugging */
	if (!only || strstr(only, "errors"))
		case_errors();
	if (!only || strstr(only, "playback"))
		case_playback(&seed, seconds, dir, 0);
	if (!only || strstr(only, "two"))
		case_playback(&seed, 4, NULL, 1);
	if (!only || strstr(only, "record"))
		case_record_only(&seed, seconds / 2 > 0 ? seconds / 2 : 1, dir);
	if (!only || strstr(only, "fallback"))
		case_fallback(&seed, 4);
	if (own.pid)
		gf_jack_server_stop(&own, SIGTERM);
	if (!only || strstr(only, "loss"))
		case_device_loss(&seed, dir); /* last: leaves PortAudio unusable */
	printf("test_live_jack: ok\n");
	rmdir(dir);
	free(dir);
	return 0;
}
