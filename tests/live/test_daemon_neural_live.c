/* The neural stage's live controls under the real `gpufir --live`, against a
 * private JACK server (dummy driver), as systemd runs it (docs/api.md,
 * "Neural stage"; docs/daemon.md, "The neural stage's live controls"). Skips
 * with 77 where scripts/install-deepfilter.sh has not installed DeepFilterNet's
 * runtime.
 *
 * A JACK client feeds steady white noise to both channels; DeepFilterNet3
 * hears no speech in it and cuts it as far as its attenuation limit lets it,
 * and the client records what comes back. The recording's level against the
 * input's tells what is in force. While the audio flows:
 * 1. at atten_lim_db 100 the noise is cut deep; SetNeural bypass: it comes back
 *    whole; atten_lim_db 6 without bypass: 6 dB down (the limit is the cut);
 *    GetNeural, GetStatus and the status socket say so; a limit out of range
 *    is refused and changes nothing;
 * 2. a reload that changes only atten_lim_db (to 20) is applied live, not as a
 *    restart, and drops the API's limit: 20 dB down; one that sets
 *    bypass = true: whole again;
 * 3. over all of it the stream never restarted (its block count only grew, no
 *    READY of a restart) and no xrun. That the bypass ramp leaves no click is
 *    the stage's own (test_neural_bank). */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "stagetest.h"
#include "status.h"
#include "testutil.h"

#define RATE 48000
#define CH 2
#define BLOCK 256 /* the stage's hop (10 ms) is due within a block */
#define MAX_S 90
#define MAX_FRAMES ((size_t)RATE * MAX_S)
#define AMP 0.1f
#define MEASURE (RATE * 2 / 5) /* the level's last 400 ms */
#define TOL_DB 2.5	       /* the model's cut of noise at its limit is not exactly the limit */

static struct gf_stagetest t;

/* The config with the neural stage's settings @p dfn; its hops may wait for all the stream's slack
 * (on a loaded machine GPUFIR_TEST_LATENCY_SLACK gives more), so that they are not late for want of
 * it. */
static void write_conf(const char *dfn)
{
	FILE *f = gf_daemon_conf_begin_new(&t.dm, RATE, BLOCK, "cpu", CH, "system");
	fprintf(f,
		"crossfade_ms = 5.0;\ncontrol_socket = \"%s\";\ngpu_deadline_ms = %.3f;\n"
		"filters = ( { name = \"id\"; design = \"identity\"; },\n"
		"  { name = \"dfn\"; design = \"deepfilter\"; " GF_TEST_NEURAL_RUNTIME
		"%s } );\nchain = [\"id\", \"dfn\"];\n",
		t.ctl_path, 1000.0 * (gf_test_latency_slack() + 1u) * BLOCK / RATE, dfn);
	gf_daemon_conf_end_new(&t.dm, f);
}

/* The recording's level over its last MEASURE frames (channel 0), dB relative to the input's. */
static double level_db(void)
{
	size_t end = atomic_load_explicit(&t.tap.rec_pos, memory_order_acquire);
	CHECK(end > MEASURE);
	double p = 0.0;
	for (size_t i = end - MEASURE; i < end; i++)
		p += (double)t.rec[i * CH] * t.rec[i * CH] / MEASURE;
	return 10.0 * log10(p / (AMP * AMP / 3.0) + 1e-30); /* uniform in +-AMP: power AMP^2 / 3 */
}

/* The level reaches @p want_db (or, with @p below, goes below it): read after pauses for up to 5 s
 * (the ramp is 20 ms, the stage's latency 40 ms, the measure 400 ms; a loaded machine's JACK skips
 * cycles), else the test fails. */
static void level_is(double want_db, int below, const char *what)
{
	double got = NAN;
	for (double end = gf_now_s() + 5.0; gf_now_s() < end;) {
		gf_daemon_idle_ms(&t.dm, 300);
		got = level_db();
		if (below ? got < want_db : fabs(got - want_db) <= TOL_DB / 2)
			break;
	}
	printf("%s: %.1f dB (expected %s%.1f)\n", what, got, below ? "below " : "", want_db);
	if (below && !(got < want_db))
		gf_daemon_die(&t.dm, "the neural stage does not cut the noise");
	if (!below)
		gf_apic_expect_near(&t.api, got, want_db, TOL_DB, what);
}

/* Status: the stream has run on, with no xrun; the live controls. */
static void status_is(const char *atten, const char *bypass, const char *what)
{
	char st[GF_STATUS_MAX];
	gf_stagetest_status(&t, "neural", "atten_lim_db", atten, bypass, what, st, sizeof(st));
	printf("%s: neural late %ld, dropped %ld\n", what, gf_daemon_status_num(st, "neural_late"),
	       gf_daemon_status_num(st, "neural_dropped"));
}

/* A reload of the file with @p dfn: applied live (no restart). */
static void reload_live(const char *dfn)
{
	write_conf(dfn);
	gf_stagetest_reloaded(&t, dfn,
			      "a reload of the neural stage's atten_lim_db or bypass was not applied live");
}

static void api_controls(void)
{
	const char *r = gf_stagetest_call(&t, "\"GetNeural\"", "atten_lim_db", 0, 100.0);
	gf_apic_expect_near(&t.api, gf_apic_num(r, "channels"), 2.0, 0.0, "GetNeural's channels");
	level_is(-20.0, 1, "at atten_lim_db 100");
	gf_stagetest_call(&t, "{\"SetNeural\": {\"bypass\": true}}", "atten_lim_db", 1, 100.0);
	level_is(0.0, 0, "bypassed");
	status_is("100.0", "yes", "bypassed");
	gf_stagetest_call(&t, "{\"SetNeural\": {\"bypass\": false, \"atten_lim_db\": 6}}", "atten_lim_db", 0,
			  6.0);
	level_is(-6.0, 0, "atten_lim_db 6");
	r = gf_apic_call(&t.api, "\"GetStatus\"");
	gf_apic_expect(&t.api, r, "\"neural\":{", "GetStatus's neural");
	status_is("6.0", "no", "atten_lim_db 6");
	gf_apic_expect(&t.api, gf_apic_call(&t.api, "{\"SetNeural\": {\"atten_lim_db\": 0}}"),
		       "outside 1..100", "SetNeural atten 0's refusal");
	level_is(-6.0, 0, "after a refused request");
}

/* The stream's run under the controls and reloads (1. and 2. at the top). */
static void run_checks(void)
{
	api_controls();
	reload_live("atten_lim_db = 20.0;");
	level_is(-20.0, 0, "reloaded at atten_lim_db 20 (the API's limit dropped)");
	status_is("20.0", "no", "reloaded at 20 dB");
	reload_live("atten_lim_db = 20.0; bypass = true;");
	level_is(0.0, 0, "reloaded with bypass = true");
	status_is("20.0", "yes", "reloaded with bypass");
	gf_stagetest_no_restart(&t);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	gf_daemon_need_deepfilter();
	const char *bin = gf_daemon_test_bin(1);
	gf_stagetest_open(&t, "daemon-neural-live", MAX_FRAMES, CH);
	uint64_t rng = gf_test_seed("test_daemon_neural_live");
	for (size_t i = 0; i < MAX_FRAMES * CH; i++)
		t.x[i] = AMP * gf_test_randf(&rng); /* uniform in [-1, 1) */
	write_conf("atten_lim_db = 100.0;");
	/* DeepFilterNet3's normalisation settles over about a second */
	gf_stagetest_start(&t, bin, "gpufir-neurlive", RATE, BLOCK, 60.0, 5000);
	run_checks();
	gf_stagetest_close(&t);
	puts("test_daemon_neural_live: ok");
	return 0;
}
