/* Live hum notches under the real `gpufir --live`, against a private JACK
 * server (dummy driver, sync mode), with the default chain (config/gpufir.conf's
 * filters: rumble, hum with freq_hz = "auto", hiss, suppressor) on JACK ports.
 *
 * A JACK client feeds a speech-like voice (tests/lib/humsig.h) and records
 * what comes back:
 * 1. for the first HUM_AT_S seconds there is no hum: the status says
 *    "hum: none" after several analyses, and nothing was rebuilt;
 * 2. then 50.02 Hz hum on harmonics 1, 2 and 3 is added: the status says
 *    "hum: 50 Hz, harmonics 1 2 3" within HUM_FIND_S, the fundamental within
 *    0.05 Hz, after a reload or a few (a harmonic may pass the hysteresis an
 *    analysis after the others; each swaps the filter in, the stream is not
 *    restarted, more taps), and no analysis sample was dropped;
 * 3. at the output the hum drops: each harmonic's level in the 2 s after the
 *    swap is at least MIN_DROP_DB below its level in 2 s before it, while the
 *    voice's gain (300 Hz-3 kHz, output over input) stays within 2 dB;
 * 4. started again with max_taps = 1024 (the chain fits, with the notches it
 *    does not): the hum is found, its rebuild fails and is counted and
 *    logged as a failed reload, the running filter stays (no notch, the same
 *    taps), and the same set is not tried again. */
#include <jack/jack.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemonutil.h"
#include "humsig.h"
#include "status.h"
#include "testutil.h"

#define RATE 48000
#define CH 2
#define BLOCK 256
#define MAX_S 60
#define MAX_FRAMES ((size_t)RATE * MAX_S)
#define HUM_AT_S 14	/* the hum starts at this feed position */
#define HUM_FIND_S 20.0 /* it must be notched within this long */
#define MIN_DROP_DB 15.0
#define WIN ((size_t)RATE * 2)

static struct gf_daemon dm;
static struct gf_daemon_tap tap;

/* The daemon's config: the JACK head, @p extra, then the default chain as config/gpufir.conf writes it. */
static void write_conf(const char *extra)
{
	const char *src = getenv("GPUFIR_SOURCE_DIR");
	char path[600], line[512];
	CHECK(src);
	snprintf(path, sizeof(path), "%s/config/gpufir.conf", src);
	FILE *in = fopen(path, "r"), *f = gf_daemon_conf_begin(&dm, RATE, BLOCK, "cpu", CH, "system");
	CHECK(in && f);
	int copying = 0;
	fputs(extra, f);
	while (fgets(line, sizeof(line), in)) {
		copying |= strncmp(line, "filters = (", 11) == 0;
		if (copying)
			fputs(line, f);
	}
	CHECK(copying);
	fclose(in);
	CHECK(fclose(f) == 0);
}

static size_t rec_pos(void)
{
	return atomic_load_explicit(&tap.rec_pos, memory_order_acquire);
}

static size_t feed_pos(void)
{
	return atomic_load_explicit(&tap.feed_pos, memory_order_relaxed);
}

/* The status line "KEY: ..." (its value) into @p out. */
static void status_text(const char *st, const char *key, char *out, size_t len)
{
	char k[64];
	snprintf(k, sizeof(k), "\n%s: ", key);
	const char *p = strstr(st, k);
	snprintf(out, len, "%.*s", p ? (int)strcspn(p + strlen(k), "\n") : 0, p ? p + strlen(k) : "");
}

/* Level (dBFS RMS) of the band [lo, hi] Hz of channel 0 of @p y over WIN frames: a sum of tones. */
static double band_dbfs(const float *y, double lo, double hi)
{
	double p = 0.0;
	for (double f = lo; f <= hi; f += 25.0)
		p += pow(10.0, gf_test_tone_dbfs(y, WIN, CH, RATE, f) / 10.0);
	return 10.0 * log10(p);
}

/* 4. The daemon again, with room for the chain but not for its notches: hum is in the input now. */
static void failed_rebuild(const char *bin, jack_client_t *jc, long taps0)
{
	char st[GF_STATUS_MAX], hum[200], found[200], last[300];
	write_conf("max_taps = 1024;\n");
	int ready = dm.nl.ready;
	gf_daemon_spawn(&dm, bin, 0);
	gf_daemon_wait_ready(&dm, ready + 1, 30.0, "start-up with max_taps = 1024");
	gf_daemon_connect_ports(&dm, jc, &tap);
	size_t t0 = feed_pos();
	long failures = 0;
	do {
		gf_daemon_idle_ms(&dm, 250);
		gf_daemon_query_status(&dm, st, sizeof(st));
		status_text(st, "hum_found", found, sizeof(found));
	} while (strcmp(found, "50 Hz, harmonics 1 2 3") != 0 &&
		 feed_pos() < t0 + (size_t)(HUM_FIND_S * RATE));
	gf_daemon_idle_ms(&dm, 1000); /* its reload ends */
	gf_daemon_query_status(&dm, st, sizeof(st));
	failures = gf_daemon_status_num(st, "reload_failures");
	gf_daemon_idle_ms(&dm, 5000); /* 5 analyses more: the same set, not tried again */
	gf_daemon_query_status(&dm, st, sizeof(st));
	status_text(st, "hum", hum, sizeof(hum));
	status_text(st, "last_reload", last, sizeof(last));
	printf("max_taps = 1024: found %s; hum: %s; taps %ld; reload failures %ld, 5 s later %ld; last "
	       "reload: "
	       "%s\n",
	       found, hum, gf_daemon_status_num(st, "taps"), failures,
	       gf_daemon_status_num(st, "reload_failures"), last);
	if (strcmp(found, "50 Hz, harmonics 1 2 3") != 0 || strcmp(hum, "none") != 0 ||
	    gf_daemon_status_num(st, "taps") != taps0 || strncmp(last, "reload failed: ", 15) != 0)
		gf_daemon_die(&dm, "a hum rebuild over max_taps did not fail and keep the running filter");
	if (failures < 1 || gf_daemon_status_num(st, "reload_failures") != failures)
		gf_daemon_die(&dm, "a failed hum rebuild was tried again for the same set");
	gf_daemon_terminate(&dm, 20.0, "");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(1);
	uint64_t rng = gf_test_seed("test_daemon_hum");
	gf_daemon_init(&dm, "daemon-hum");
	float *mono = malloc(sizeof(float) * MAX_FRAMES), *x = malloc(sizeof(float) * MAX_FRAMES * CH),
	      *rec = calloc(MAX_FRAMES * CH, sizeof(float));
	CHECK(mono && x && rec);
	gf_test_speechlike(mono, MAX_FRAMES, RATE, -8.0, &rng);
	const uint32_t harm[] = {1, 2, 3};
	const double dbfs[] = {-30.0, -36.0, -40.0};
	gf_test_add_hum(mono, (size_t)HUM_AT_S * RATE, MAX_FRAMES, 1, RATE, 50.02, harm, dbfs, 3);
	for (size_t i = 0; i < MAX_FRAMES; i++)
		for (int c = 0; c < CH; c++)
			x[i * CH + c] = mono[i];
	gf_daemon_tap_init(&tap, x, rec, MAX_FRAMES, CH, 0);
	write_conf("");

	jack_client_t *jc = gf_daemon_jack_client(&dm, "gpufir-hum", RATE, BLOCK, &tap);
	gf_daemon_spawn(&dm, bin, 0);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	gf_daemon_connect_ports(&dm, jc, &tap);
	char st[GF_STATUS_MAX], hum[200], found[200];

	/* 1. No hum: none found, nothing rebuilt. */
	while (feed_pos() < (size_t)(HUM_AT_S - 1) * RATE)
		gf_daemon_idle_ms(&dm, 100);
	gf_daemon_query_status(&dm, st, sizeof(st));
	status_text(st, "hum", hum, sizeof(hum));
	long analyses = gf_daemon_status_num(st, "hum_analyses"), taps0 = gf_daemon_status_num(st, "taps");
	printf("no hum, %.1f s fed: hum: %s, %ld analyses, %ld reloads, %ld taps\n",
	       (double)feed_pos() / RATE, hum, analyses, gf_daemon_status_num(st, "reloads"), taps0);
	if (strcmp(hum, "none") != 0 || analyses < 5 || gf_daemon_status_num(st, "reloads") != 0)
		gf_daemon_die(&dm,
			      "without hum the status does not say \"hum: none\" after several analyses");

	/* 2. Hum: found and notched (the harmonics may come in more than one step). */
	size_t first_at = 0, all_at = 0;
	while (!all_at && feed_pos() < (size_t)((HUM_AT_S + HUM_FIND_S) * RATE)) {
		gf_daemon_idle_ms(&dm, 250);
		gf_daemon_query_status(&dm, st, sizeof(st));
		status_text(st, "hum", hum, sizeof(hum));
		if (!first_at && strcmp(hum, "none") != 0)
			first_at = rec_pos();
		if (strcmp(hum, "50 Hz, harmonics 1 2 3") == 0)
			all_at = rec_pos();
	}
	/* The status says the new set once the reload hands the filter over; "taps" says what the
	 * worker runs, which follows within a block or two. The output is judged from then on. */
	for (size_t by = feed_pos() + RATE * 2;
	     all_at && gf_daemon_status_num(st, "taps") == taps0 && feed_pos() < by;) {
		gf_daemon_idle_ms(&dm, 50);
		gf_daemon_query_status(&dm, st, sizeof(st));
		all_at = rec_pos();
	}
	char f0[32], last[200];
	status_text(st, "hum_found", found, sizeof(found));
	status_text(st, "hum_f0_hz", f0, sizeof(f0));
	status_text(st, "last_reload", last, sizeof(last));
	long taps1 = gf_daemon_status_num(st, "taps"), reloads = gf_daemon_status_num(st, "reloads");
	long delay = gf_daemon_status_num(st, "total_latency_frames");
	printf("hum from %d s: first notched at %.1f s, all at %.1f s: hum: %s at %s Hz (found: %s), %ld "
	       "reloads, taps %ld -> %ld, %ld analysis samples dropped, last reload: %s\n",
	       HUM_AT_S, (double)first_at / RATE, (double)all_at / RATE, hum, f0, found, reloads, taps0,
	       taps1, gf_daemon_status_num(st, "hum_dropped_samples"), last);
	if (!all_at || fabs(atof(f0) - 50.02) > 0.05)
		gf_daemon_die(&dm, "the hum was not found and notched as 50 Hz, harmonics 1 2 3");
	if (reloads < 1 || reloads > 3 || strncmp(last, "reloaded ", 9) != 0 || taps1 <= taps0 ||
	    gf_daemon_status_num(st, "hum_dropped_samples") != 0)
		gf_daemon_die(&dm, "the notches were not swapped in by reloads without drops");

	/* 3. The hum at the output drops; the voice does not. */
	while (rec_pos() < all_at + (size_t)RATE * 3)
		gf_daemon_idle_ms(&dm, 100);
	gf_daemon_terminate(&dm, 20.0, "");
	failed_rebuild(bin, jc, taps0);
	jack_deactivate(jc);
	jack_client_close(jc);
	const float *before = rec + (first_at - (size_t)RATE * 27 / 10) * CH,
		    *after = rec + (all_at + (size_t)RATE / 2) * CH;
	CHECK(delay > 0 && first_at > (size_t)RATE * 3 + (size_t)delay);
	int ok = 1;
	for (int k = 0; k < 3; k++) {
		double f = 50.02 * harm[k], b = gf_test_tone_dbfs(before, WIN, CH, RATE, f),
		       a = gf_test_tone_dbfs(after, WIN, CH, RATE, f);
		printf("harmonic %u (%.2f Hz) at the output: %.1f dBFS before the notch, %.1f after: %.1f dB "
		       "less\n",
		       harm[k], f, b, a, b - a);
		ok &= b - a >= MIN_DROP_DB;
	}
	/* The voice's gain, output over input (the input a total latency earlier): the same. */
	size_t b0 = first_at - (size_t)RATE * 27 / 10, a0 = all_at + (size_t)RATE / 2;
	double vb = band_dbfs(before, 300.0, 3000.0) -
		    band_dbfs(x + (b0 - (size_t)delay) * CH, 300.0, 3000.0),
	       va = band_dbfs(after, 300.0, 3000.0) - band_dbfs(x + (a0 - (size_t)delay) * CH, 300.0, 3000.0);
	printf("the voice's gain, 300 Hz-3 kHz (latency %ld frames): %.2f dB before, %.2f dB after\n", delay,
	       vb, va);
	if (!ok)
		gf_daemon_die(&dm, "the hum at the output did not drop by the notches");
	if (fabs(vb - va) > 2.0)
		gf_daemon_die(&dm, "the voice changed with the notches");
	gf_daemon_finish(&dm);
	free(mono);
	free(x);
	free(rec);
	puts("test_daemon_hum: ok");
	return 0;
}
