/* The noise suppressor's live controls under the real `gpufir --live`, against
 * a private JACK server (dummy driver), as systemd runs it (docs/api.md,
 * "Noise suppressor"; docs/daemon.md, "Reload").
 *
 * A JACK client feeds noise bursts (200 ms on, 200 ms off, over a floor 40 dB
 * down) to both channels; the suppressor (reduction_db = 30) learns the floor
 * as noise and cuts it by its depth, and the client records what comes back.
 * The floor's level in the recording (its quietest windows) tells the depth in
 * force. While the audio flows:
 * 1. SetSuppressor bypass: the floor comes back whole; depth_db 10 without
 *    bypass: 10 dB down; GetSuppressor, GetStatus and the status socket say so;
 * 2. a reload that changes only reduction_db (to 20) is applied live, not as a
 *    restart, and drops the API's depth: 20 dB down; one that sets
 *    bypass = true: whole again;
 * 3. over all of it the stream never restarted (its block count only grew,
 *    no READY of a restart), no xrun, no dropout (no run of silent samples in
 *    the recording) and no pop (no sample-to-sample jump beyond the largest
 *    of the input). That the ramp itself leaves no click is measured on a
 *    tone in test_suppress_live. */
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
#define BLOCK 64
#define MAX_S 60
#define MAX_FRAMES ((size_t)RATE * MAX_S)
#define BURST 0.2f
#define FLOOR 0.002f
#define PERIOD (RATE / 5) /* frames of a burst, and of the floor between two */
#define WINDOW 480	  /* 10 ms: the level's windows */
#define TOL_DB 1.5	  /* the floor's estimate wobbles; the depths tried are 10 dB apart */
#define DROPOUT 16	  /* exact zeros in a row: the floor noise is never that */

static struct gf_stagetest t;

static void write_conf(const char *nr)
{
	FILE *f = gf_daemon_conf_begin_new(&t.dm, RATE, BLOCK, "cpu", CH, "system");
	fprintf(f,
		"crossfade_ms = 5.0;\ncontrol_socket = \"%s\";\n"
		"filters = ( { name = \"id\"; design = \"identity\"; },\n"
		"  { name = \"nr\"; design = \"suppress\"; %s } );\nchain = [\"id\", \"nr\"];\n",
		t.ctl_path, nr);
	gf_daemon_conf_end_new(&t.dm, f);
}

static int cmp_double(const void *a, const void *b)
{
	double u = *(const double *)a, v = *(const double *)b;
	return u < v ? -1 : u > v;
}

/* The floor's level in the recording's last 800 ms (two bursts, two floors), dB relative to the
 * input's floor (channel 0): the mean power of its quietest quarter of 10 ms windows, all inside
 * floors. */
static double floor_level_db(void)
{
	enum { N = 4 * PERIOD / WINDOW };
	size_t end = atomic_load_explicit(&t.tap.rec_pos, memory_order_acquire);
	CHECK(end > (size_t)N * WINDOW);
	double p[N], sum = 0.0;
	for (size_t w = 0; w < N; w++) {
		p[w] = 0.0;
		for (size_t i = end - (size_t)(N - w) * WINDOW, k = 0; k < WINDOW; i++, k++)
			p[w] += (double)t.rec[i * CH] * t.rec[i * CH] / WINDOW;
	}
	qsort(p, N, sizeof(double), cmp_double);
	for (size_t w = 0; w < N / 4; w++)
		sum += p[w] / (N / 4);
	return 10.0 * log10(sum / (FLOOR * FLOOR / 3.0)); /* uniform in +-FLOOR: power FLOOR^2 / 3 */
}

/* The floor's level reaches @p want_db: read after pauses for up to 5 s (the ramp is 30 ms, the
 * latencies 50 ms, the measure 800 ms; a loaded machine's JACK skips cycles, so the recording's last
 * 800 ms may reach back further in time), else the test fails. */
static void level_is(double want_db, const char *what)
{
	double got = NAN;
	for (double end = gf_now_s() + 5.0; gf_now_s() < end;) {
		gf_daemon_idle_ms(&t.dm, 300);
		got = floor_level_db();
		if (fabs(got - want_db) <= TOL_DB / 2)
			break;
	}
	printf("%s: %.1f dB (expected %.1f)\n", what, got, want_db);
	gf_apic_expect_near(&t.api, got, want_db, TOL_DB, what);
}

/* The largest sample-to-sample jump of @p y from @p from to @p end, and its longest run of exact zeros,
 * on every channel. */
static double largest_jump(const float *y, size_t from, size_t end, size_t *zeros)
{
	double m = 0.0;
	size_t run[CH] = {0};
	*zeros = 0;
	for (size_t i = from + 1; i < end; i++)
		for (int c = 0; c < CH; c++) {
			m = fmax(m, fabs((double)y[i * CH + c] - y[(i - 1) * CH + c]));
			run[c] = y[i * CH + c] == 0.0f ? run[c] + 1 : 0;
			*zeros = run[c] > *zeros ? run[c] : *zeros;
		}
	return m;
}

/* Status: the stream has run on, with no xrun; the live controls. */
static void status_is(const char *depth, const char *bypass, const char *what)
{
	char st[GF_STATUS_MAX];
	gf_stagetest_status(&t, "suppressor", "reduction_db", depth, bypass, what, st, sizeof(st));
}

/* A reload of the file with @p nr: applied live (no restart). */
static void reload_live(const char *nr)
{
	write_conf(nr);
	gf_stagetest_reloaded(&t, nr,
			      "a reload of the suppressor's reduction_db or bypass was not applied live");
}

static void api_controls(void)
{
	const char *r = gf_stagetest_call(&t, "\"GetSuppressor\"", "depth_db", 0, 30.0);
	gf_apic_expect_near(&t.api, gf_apic_num(r, "channels"), 2.0, 0.0, "GetSuppressor's channels");
	level_is(-30.0, "at reduction_db 30");
	gf_stagetest_call(&t, "{\"SetSuppressor\": {\"bypass\": true}}", "depth_db", 1, 30.0);
	level_is(0.0, "bypassed");
	status_is("30.0", "yes", "bypassed");
	gf_stagetest_call(&t, "{\"SetSuppressor\": {\"bypass\": false, \"depth_db\": 10}}", "depth_db", 0,
			  10.0);
	level_is(-10.0, "depth 10 dB");
	r = gf_apic_call(&t.api, "\"GetStatus\"");
	gf_apic_expect(&t.api, r, "\"suppressor\":{", "GetStatus's suppressor");
	status_is("10.0", "no", "depth 10 dB");
	gf_apic_expect(&t.api, gf_apic_call(&t.api, "{\"SetSuppressor\": {\"depth_db\": 50}}"),
		       "outside 0..40", "SetSuppressor depth 50's refusal");
	level_is(-10.0, "after a refused request");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(1);
	gf_stagetest_open(&t, "daemon-suppress-live", MAX_FRAMES, CH);
	uint64_t rng = gf_test_seed("test_daemon_suppress_live");
	for (size_t i = 0; i < MAX_FRAMES; i++) {
		float g = (i / PERIOD) % 2 ? BURST : FLOOR;
		for (int c = 0; c < CH; c++)
			t.x[i * CH + c] = g * gf_test_randf(&rng); /* uniform in [-1, 1) */
	}
	write_conf("reduction_db = 30.0;");
	/* the suppressor learns the floor as noise */
	gf_stagetest_start(&t, bin, "gpufir-suplive", RATE, BLOCK, 30.0, 2500);
	size_t from = atomic_load_explicit(&t.tap.rec_pos, memory_order_acquire);
	api_controls();
	reload_live("reduction_db = 20.0;");
	level_is(-20.0, "reloaded at reduction_db 20 (the API's depth dropped)");
	status_is("20.0", "no", "reloaded at 20 dB");
	reload_live("reduction_db = 20.0; bypass = true;");
	level_is(0.0, "reloaded with bypass = true");
	status_is("20.0", "yes", "reloaded with bypass");

	size_t end = atomic_load_explicit(&t.tap.rec_pos, memory_order_acquire), zeros, in_zeros;
	double jump = largest_jump(t.rec, from, end, &zeros),
	       in_jump = largest_jump(t.x, 0, MAX_FRAMES, &in_zeros);
	printf("over the changes: largest jump %.4f (the input's %.4f), longest run of zeros %zu\n", jump,
	       in_jump, zeros);
	if (jump > in_jump * 1.02)
		gf_daemon_die(&t.dm, "a pop: the output jumped by more than the input ever does");
	if (zeros >= DROPOUT)
		gf_daemon_die(&t.dm, "a dropout: a run of silent samples in the recording");
	gf_stagetest_no_restart(&t);
	gf_stagetest_close(&t);
	puts("test_daemon_suppress_live: ok");
	return 0;
}
