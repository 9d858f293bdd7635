/* A stage after the FIR under the real `gpufir --live`, against a private JACK
 * server (dummy driver, sync mode), as systemd runs it: the noise suppressor
 * (case "suppress"), or the neural stage (case "deepfilter": DeepFilterNet3;
 * skips with 77 where scripts/install-deepfilter.sh has not installed it).
 *
 * A JACK client feeds noise bursts (200 ms on, 200 ms off, over a quiet
 * floor; for the neural stage, which takes noise away, harmonic syllables)
 * and records what comes back. The config runs a 63-tap FIR, then the stage
 * (below, "the suppressor"):
 * 1. the status socket names the suppressor and its latency (its frame,
 *    within 24 ms; the neural stage's 1920 frames, 40 ms), and the total
 *    latency is the stream's plus the suppressor's;
 * 2. a reload that changes only the FIR is swapped in: the stream is not
 *    restarted and the suppressor runs on;
 * 3. a reload that changes the suppressor (highpass_hz; reduction_db alone is
 *    live: test_daemon_suppress_live.c) or the neural stage (post_filter_beta;
 *    atten_lim_db and bypass alone are live: test_daemon_neural_live.c)
 *    restarts the stream, as other stream settings do; one that removes it too, and then
 *    the recording is the FIR's output, sample for sample, at a constant
 *    delay D (the JACK round trip plus the stream's latency);
 * 4. with the suppressor, the recording lags the FIR's output by D plus the
 *    suppressor's latency: its cross-correlation with the FIR's output peaks
 *    there (the stream's latency was the same in both runs). */
#include <jack/jack.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "daemonutil.h"
#include "status.h"
#include "testutil.h"

#define RATE 48000
#define CH 2
#define TAPS_A 63
#define TAPS_B 31
#define MAX_S 60
#define MAX_FRAMES ((size_t)RATE * MAX_S)
#define TOL 2e-5
#define XC_FRAMES 24000 /* frames the cross-correlation sums */
#define XC_MAX_LAG 16384

static struct gf_daemon dm;
static float h_a[TAPS_A], h_b[TAPS_B];
static float *x, *rec;
static struct gf_daemon_tap tap;
static jack_client_t *jc;

/* What differs between the stages under test. */
struct stage {
	const char *name, *design;
	uint32_t block; /* the neural stage's hop waits up to two blocks: 256 leave it 10.7 ms */
	const char *setting_a,
		*setting_b; /* the stage's settings before and after the reload that changes it */
	const char *status_a, *status_b; /* the status lines of setting_a and setting_b */
	const char *status_name, *status_none, *changed, *removed;
	long max_frames; /* its latency at most */
};

static const struct stage stages[] = {
	{"suppress", "suppress", 64, "reduction_db = 18.0;", "reduction_db = 12.0; highpass_hz = 30.0;",
	 "suppressor_reduction_db: 18.0", "suppressor_reduction_db: 12.0", "suppressor: nr\n",
	 "suppressor: none", "stream restarted: suppressor highpass_hz 0 -> 30",
	 "stream restarted: suppressor on channel 0 removed", RATE * 24 / 1000},
	{"deepfilter", "deepfilter", 256, GF_TEST_NEURAL_RUNTIME "atten_lim_db = 100.0;",
	 GF_TEST_NEURAL_RUNTIME "atten_lim_db = 20.0; post_filter_beta = 0.02;", "neural_atten_lim_db: 100.0",
	 "neural_atten_lim_db: 20.0", "neural: nr\n", "neural: none",
	 "stream restarted: neural stage post_filter_beta 0 -> 0.02",
	 "stream restarted: neural stage on channel 0 removed", 1920},
};
static const struct stage *S = &stages[0];

/* The block's deadline: the default, two blocks, for the suppressor; for the neural stage, whose
 * hop (a few ms of one core) is due within a block, all the slack the stream has (on a loaded
 * machine GPUFIR_TEST_LATENCY_SLACK gives it more), so that the hops are not late for want of it. */
static double deadline_ms(void)
{
	unsigned blocks = S == &stages[0] ? 2u : gf_test_latency_slack() + 1u;
	return 1000.0 * blocks * S->block / RATE;
}

/* The config with FIR @p taps_file and, unless @p nr is NULL, a suppressor with settings @p nr. */
static void write_conf(const char *taps_file, const char *nr)
{
	FILE *f = gf_daemon_conf_begin_new(&dm, RATE, S->block, "cpu", CH, "system");
	fprintf(f,
		"crossfade_ms = 5.0;\ngpu_deadline_ms = %.3f;\n"
		"filters = ( { name = \"f\"; file = \"%s\"; format = \"text\"; }%s%s%s%s%s );\n"
		"chain = [\"f\"%s];\n",
		deadline_ms(), taps_file, nr ? ",\n  { name = \"nr\"; design = \"" : "", nr ? S->design : "",
		nr ? "\"; " : "", nr ? nr : "", nr ? " }" : "", nr ? ", \"nr\"" : "");
	gf_daemon_conf_end_new(&dm, f);
}

static double ref_at(const float *h, uint32_t taps, size_t n, int c)
{
	double acc = 0.0;
	for (uint32_t k = 0; k < taps && k <= n; k++)
		acc += (double)h[k] * x[(n - k) * CH + c];
	return acc;
}

/* The delay at which recording frames [m0, m0 + 256) are filter @p h's output exactly, or -1. */
static long exact_delay(const float *h, uint32_t taps, size_t m0)
{
	for (size_t d = 0; d < XC_MAX_LAG && d < m0; d++) {
		int ok = 1;
		for (size_t m = m0; m < m0 + 256 && ok; m++)
			for (int c = 0; c < CH && ok; c++)
				ok = fabs(rec[m * CH + c] - ref_at(h, taps, m - d, c)) <= TOL;
		if (ok)
			return (long)d;
	}
	return -1;
}

/* The lag at which the recording after @p m0 best correlates with filter @p h's output: the sum over
 * channels of rec[m] * ref[m - d] for m in [m0, m0 + XC_FRAMES), every d in [0, XC_MAX_LAG), by FFT
 * (the direct sums took 3 s of the test, 10 s under the sanitizers). */
static long xcorr_peak(const float *h, uint32_t taps, size_t m0)
{
	size_t nb = XC_FRAMES + XC_MAX_LAG;
	float *ref = malloc(sizeof(float) * nb * CH);
	double *r = calloc(XC_MAX_LAG + 1, sizeof(double));
	CHECK(ref && r && m0 >= XC_MAX_LAG);
	size_t base = m0 - XC_MAX_LAG; /* input frames base .. m0 + XC_FRAMES */
	for (size_t n = 0; n < nb; n++)
		for (int c = 0; c < CH; c++)
			ref[n * CH + c] = (float)ref_at(h, taps, base + n, c);
	for (int c = 0; c < CH; c++) /* r[s]: lag d = XC_MAX_LAG - s */
		gf_test_xcorr(rec + m0 * CH + c, XC_FRAMES, CH, ref + c, nb, CH, r);
	long best = -1;
	double top = -INFINITY;
	for (long d = 0; d < XC_MAX_LAG; d++)
		if (r[XC_MAX_LAG - d] > top)
			top = r[XC_MAX_LAG - d], best = d;
	free(ref);
	free(r);
	return best;
}

/* Reload into @p taps_file / @p nr (@p restarts: the stream, whose new ports are then
 * connected); wait for it; the status block after it into @p st. */
static void reload(const char *taps_file, const char *nr, int restarts, int *ready, char *st, size_t len)
{
	write_conf(taps_file, nr);
	gf_daemon_wait_ready(&dm, ++*ready, 30.0, "reload");
	gf_daemon_idle_ms(&dm, 500);
	if (restarts)
		gf_daemon_connect_ports(&dm, jc, &tap);
	gf_daemon_idle_ms(&dm, 1500);
	gf_daemon_query_status(&dm, st, len);
	const char *l = strstr(st, "last_reload: ");
	printf("reload to %s%s%s: %.*s\n", taps_file, nr ? " + suppressor " : "", nr ? nr : "",
	       l ? (int)strcspn(l, "\n") : 0, l ? l : "");
}

/* The input: noise bursts over a quiet floor, or (voiced) syllables: 11 harmonics of a pitch that
 * glides, a new one each burst, under a raised-cosine envelope (a network for speech keeps them). */
static void make_input(int voiced, uint64_t *rng)
{
	const size_t burst = RATE / 5;
	double ph = 0.0, f0 = 150.0;
	for (size_t i = 0; i < MAX_FRAMES; i++) {
		int on = (i / burst) % 2;
		size_t k = i % burst;
		if (k == 0)
			f0 = 110.0 + 140.0 * (0.5 + gf_test_randf(rng));
		ph += 2.0 * M_PI * f0 * (1.0 + 0.2 * (double)k / burst) / RATE;
		double env = 0.5 - 0.5 * cos(2.0 * M_PI * (double)k / burst), v = 0.0;
		for (int h = 1; voiced && on && h < 12; h++)
			v += 0.05 / h * sin(h * ph);
		for (int c = 0; c < CH; c++)
			x[i * CH + c] =
				voiced ? (float)(env * v * (c ? 0.8 : 1.0)) + 0.002f * gf_test_randf(rng)
				       : (on ? 0.2f : 0.002f) * gf_test_randf(rng);
	}
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], stages[1].name) == 0) {
		S = &stages[1];
		gf_daemon_need_deepfilter();
	}
	const char *bin = gf_daemon_test_bin(1);
	uint64_t rng = gf_test_seed("test_daemon_suppress");
	gf_daemon_init(&dm, "daemon-suppress");
	x = malloc(sizeof(float) * MAX_FRAMES * CH);
	rec = calloc(MAX_FRAMES * CH, sizeof(float));
	CHECK(x && rec);
	gf_daemon_tap_init(&tap, x, rec, MAX_FRAMES, CH, 0);
	make_input(S != &stages[0], &rng);
	gf_test_fill_decaying_taps(h_a, TAPS_A, &rng);
	gf_test_fill_decaying_taps(h_b, TAPS_B, &rng);
	gf_daemon_write_taps_text(&dm, "a.txt", h_a, TAPS_A);
	gf_daemon_write_taps_text(&dm, "b.txt", h_b, TAPS_B);
	write_conf("a.txt", S->setting_a);

	jc = gf_daemon_jack_client(&dm, "gpufir-suppress", RATE, S->block, &tap);
	gf_daemon_spawn(&dm, bin, 0);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	gf_daemon_connect_ports(&dm, jc, &tap);
	/* the neural stage's normalisation settles over about a second (DeepFilterNet3's norm_tau) */
	gf_daemon_idle_ms(&dm, S == &stages[0] ? 2000 : 5000);
	size_t m_sup = atomic_load_explicit(&tap.rec_pos, memory_order_acquire) - XC_FRAMES - RATE / 4;

	/* 1. The status names the suppressor and adds its latency. */
	char st[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st, sizeof(st));
	long lat1 = gf_daemon_status_num(st, "latency_frames"),
	     sup = gf_daemon_status_num(st, "suppressor_frames");
	long total1 = gf_daemon_status_num(st, "total_latency_frames");
	printf("with the suppressor: latency %ld + suppressor %ld = total %ld frames\n", lat1, sup, total1);
	if (S != &stages[0]) /* its hops' deadlines: none missed is expected, but load may miss some */
		printf("neural stage: %ld hops late, %ld dropped\n", gf_daemon_status_num(st, "neural_late"),
		       gf_daemon_status_num(st, "neural_dropped"));
	if (!gf_daemon_status_has(st, S->status_name) || !gf_daemon_status_has(st, S->status_a) ||
	    !(sup > 0 && sup <= S->max_frames) || total1 != lat1 + sup)
		gf_daemon_die(&dm, "the status does not report the suppressor and its latency");
	long blocks0 = gf_daemon_status_num(st, "blocks");

	/* 2. Only the FIR changes: swapped in, the stream (and its suppressor) runs on. */
	int ready = dm.nl.ready;
	reload("b.txt", S->setting_a, 0, &ready, st, sizeof(st));
	if (!gf_daemon_status_has(st, "last_reload: reloaded ") || !gf_daemon_status_has(st, "31 taps") ||
	    !gf_daemon_status_has(st, S->status_name) || gf_daemon_status_num(st, "blocks") <= blocks0)
		gf_daemon_die(&dm, "a reload of the FIR alone did not swap it in under the running stream");

	/* 3. The suppressor changes: a restart; removed: a restart, and no suppressor after it. */
	reload("a.txt", S->setting_b, 1, &ready, st, sizeof(st));
	if (!gf_daemon_status_has(st, S->changed) || !gf_daemon_status_has(st, S->status_b))
		gf_daemon_die(&dm, "changing the suppressor did not restart the stream");
	reload("a.txt", NULL, 1, &ready, st, sizeof(st));
	if (!gf_daemon_status_has(st, S->removed) || !gf_daemon_status_has(st, S->status_none) ||
	    gf_daemon_status_num(st, "total_latency_frames") != gf_daemon_status_num(st, "latency_frames"))
		gf_daemon_die(&dm, "removing the suppressor did not restart the stream without it");
	long lat2 = gf_daemon_status_num(st, "latency_frames");
	size_t m_plain = atomic_load_explicit(&tap.rec_pos, memory_order_acquire) - RATE / 2;
	gf_daemon_terminate(&dm, 20.0, "");
	jack_deactivate(jc);
	jack_client_close(jc);

	/* 4. The audio: the FIR exactly without the suppressor; with it, the suppressor's latency later. */
	long d = exact_delay(h_a, TAPS_A, m_plain);
	if (d < 0)
		gf_daemon_die(&dm, "without the suppressor the recording is not the FIR's output");
	long want = d - lat2 + lat1 + sup, got = xcorr_peak(h_a, TAPS_A, m_sup);
	double e = 0.0; /* a window of silence (the stage muted) peaks at 0: say which it was */
	for (size_t m = m_sup; m < m_sup + XC_FRAMES; m++)
		e += (double)rec[m * CH] * rec[m * CH];
	printf("the recording's energy in the window: %g (from frame %zu)\n", e, m_sup);
	printf("without the suppressor: the FIR's output at delay %ld (latency %ld); with it: correlation "
	       "peak at %ld, expected %ld (latency %ld + %ld)\n",
	       d, lat2, got, want, lat1, sup);
	if (got != want)
		gf_daemon_die(&dm, "with the suppressor the recording does not lag by its latency");
	gf_daemon_finish(&dm);
	free(x);
	free(rec);
	puts("test_daemon_suppress: ok");
	return 0;
}
