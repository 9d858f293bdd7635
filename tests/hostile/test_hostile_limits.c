/*
 * Hostile round four: designs and small limits whose answer was wrong, in
 * process through gf_config_load / gf_config_build (what a reload runs) and
 * the daemon's state file reader. Each case prints what it tried.
 *
 *   1  close notches (50, 100, 150 Hz, Q 5; four at 200..440 Hz, Q 10),
 *      whose divided-out zeros multiply into peaks no double-precision FFT
 *      resolves: they build, within the bound of the exact cascade (checked
 *      here at 600 frequencies against gf_peq_response), with their notches
 *      deep (they were refused: "would need more than 1048575 taps")
 *   2  a high-pass at 23999.999 Hz (48 kHz) is refused with advice to lower
 *      its frequency (it used to say "raise")
 *   3  Preamp: lines add: four of 30 dB, and a config's preamp_db of 20 with
 *      a file's 20, are refused (+120 dB was taken); two of -6 give -12
 *   4  a mixer of routing alone, with no filters: loads and builds (it failed
 *      with "filters: missing")
 *   5  the state file: one over its 4096 bytes is ignored with a warning in
 *      bytes (it said "larger than 0 MiB"); volume_db = 0x10 is ignored (it
 *      was taken as 16 dB), as are inf and 1e1x
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "daemon_control.h"
#include "daemon_internal.h"
#include "error.h"
#include "peq.h"
#include "response.h"
#include "testutil.h"

static char *dir;

static char *conf(const char *name, const char *text)
{
	return gf_test_write_text_in(dir, name, text);
}

/* Load and build @p path at 48 kHz, 2 channels: the error, the set in *fs (NULL on error). */
static int load_build(const char *path, struct gf_config **c, struct gf_filter_set **fs, struct gf_errbuf *eb)
{
	*c = NULL, *fs = NULL;
	int r = gf_config_load(path, c, eb);
	if (!r)
		r = gf_config_build(*c, 48000, 2, fs, eb);
	return r;
}

static void expect_fail(int num, const char *what, const char *path, const char *want, const char * not )
{
	struct gf_config *c;
	struct gf_filter_set *fs;
	struct gf_errbuf eb = {""};
	int r = load_build(path, &c, &fs, &eb);
	printf("case %d (%s): %s -> %s\n", num, what, r ? "refused" : "ACCEPTED", eb.msg);
	CHECK(r != 0);
	CHECK(strstr(eb.msg, want) != NULL);
	CHECK(!not || !strstr(eb.msg, not ));
	gf_filter_set_free(fs);
	gf_config_free(c);
}

/* Notches at @p hz (Q @p q), a low shelf (+3 dB at 300 Hz) with @p shelf, and @p preamp_db: the design
 * builds, and channel 0 follows the exact cascade (the bands again, here) with its notches deep. */
static void expect_notches(const char *what, const double *hz, int n, double q, int shelf, double preamp_db)
{
	char text[2048];
	int at = snprintf(text, sizeof(text),
			  "filters = ( { name = \"hum\"; design = \"peq\"; preamp_db = %g; bands = (\n",
			  preamp_db);
	struct gf_peq p = {.preamp_db = preamp_db};
	struct gf_errbuf eb = {""};
	for (int k = 0; k <= n; k++) {
		struct gf_peq_band b = {.type = GF_PEQ_NOTCH, .freq_hz = k < n ? hz[k] : 0.0, .q = q};
		if (k == n && !shelf)
			break;
		if (k == n)
			b = (struct gf_peq_band){
				.type = GF_PEQ_LOWSHELF, .freq_hz = 300.0, .gain_db = 3.0, .has_gain = 1};
		at += snprintf(text + at, sizeof(text) - (size_t)at,
			       "%s  { type = \"%s\"; freq_hz = %g; %s = %g; }", k ? ",\n" : "",
			       gf_peq_type_name(b.type), b.freq_hz, k < n ? "q" : "gain_db", k < n ? q : 3.0);
		CHECK_OK_EB(gf_peq_band_finish(&b, &eb), &eb);
		CHECK_OK_EB(gf_peq_add(&p, &b, &eb), &eb);
	}
	snprintf(text + at, sizeof(text) - (size_t)at, " ); } );\nchain = [\"hum\"];\n");
	char *path = conf("notch.conf", text);
	struct gf_config *c;
	struct gf_filter_set *fs;
	alarm(60);
	int r = load_build(path, &c, &fs, &eb);
	alarm(0);
	printf("case 1 (%s): %s %s\n", what, r ? "REFUSED" : "built", eb.msg);
	CHECK_OK_EB(r, &eb);
	const float *h = gf_filter_set_channel(fs, 0);
	double worst = 0.0;
	for (int i = 0; i < 600; i++) {
		double f = 10.0 * pow(2300.0, i / 599.0), re, im; /* 10 Hz .. 23 kHz */
		double want = gf_peq_response(&p, f, 48000.0);
		gf_response_at(h, fs->taps, 48000.0, f, &re, &im);
		if (want > 1e-3) /* above -60 dB: the relative bound; below, the float32 taps' floor */
			worst = fmax(worst, fabs(20.0 * log10(hypot(re, im) / want)));
	}
	printf("case 1 (%s): %u taps, within %.4f dB of the cascade", what, fs->taps, worst);
	CHECK(worst < 0.06); /* the 0.05 dB bound, and float32 taps */
	for (int k = 0; k < n; k++) {
		double re, im;
		gf_response_at(h, fs->taps, 48000.0, hz[k], &re, &im);
		printf(", %g Hz at %.0f dB", hz[k], 20.0 * log10(hypot(re, im)));
		CHECK(hypot(re, im) < 1e-4); /* below -80 dB */
	}
	printf("\n");
	gf_peq_free(&p);
	gf_filter_set_free(fs);
	gf_config_free(c);
	free(path);
}

static void case1(void)
{
	const double three[] = {50.0, 100.0, 150.0}, four[] = {200.0, 280.0, 360.0, 440.0};
	expect_notches("notches at 50, 100, 150 Hz, Q 5", three, 3, 5.0, 0, 0.0);
	expect_notches("notches at 200..440 Hz, Q 10, a shelf, a preamp", four, 4, 10.0, 1, -2.0);
}

static void case2(void)
{
	char *p = conf("hp.conf",
		       "filters = ( { name = \"hp\"; design = \"peq\"; bands = (\n"
		       "  { type = \"highpass\"; freq_hz = 23999.999; } ); } );\nchain = [\"hp\"];\n");
	expect_fail(2, "a high-pass at 23999.999 Hz", p, "lower this band's frequency", "raise");
	free(p);
}

static void case3(void)
{
	free(conf("four.txt", "Preamp: 30 dB\nPreamp: 30 dB\nPreamp: 30 dB\nPreamp: 30 dB\n"));
	free(conf("twenty.txt", "Preamp: 20 dB\nFilter 1: ON PK Fc 1000 Hz Gain -3 dB Q 1\n"));
	free(conf("minus.txt", "Preamp: -6 dB\nPreamp: -6 dB\nFilter 1: ON PK Fc 1000 Hz Gain -3 dB Q 1\n"));
	char *p = conf("p4.conf", "filters = ( { name = \"eq\"; design = \"peq\"; file = \"four.txt\"; } );\n"
				  "chain = [\"eq\"];\n");
	expect_fail(3, "four Preamp: lines of 30 dB", p, "four.txt:2: Preamp: the preamps add up to 60 dB",
		    NULL);
	free(p);
	p = conf("p2.conf", "filters = ( { name = \"eq\"; design = \"peq\"; file = \"twenty.txt\"; "
			    "preamp_db = 20.0; } );\nchain = [\"eq\"];\n");
	expect_fail(3, "preamp_db 20 and a file's Preamp: 20 dB", p, "add up to 40 dB", NULL);
	free(p);
	p = conf("pm.conf", "filters = ( { name = \"eq\"; design = \"peq\"; file = \"minus.txt\"; } );\n"
			    "chain = [\"eq\"];\n");
	struct gf_config *c;
	struct gf_filter_set *fs;
	struct gf_errbuf eb = {""};
	CHECK_OK_EB(load_build(p, &c, &fs, &eb), &eb);
	double dc = 0.0; /* a peaking band passes DC as it is: the preamp alone */
	for (uint32_t k = 0; k < fs->taps; k++)
		dc += gf_filter_set_channel(fs, 0)[k];
	printf("case 3 (two Preamp: lines of -6 dB): DC %.3f dB\n", 20.0 * log10(dc));
	CHECK(fabs(20.0 * log10(dc) + 12.0) < 0.01);
	gf_filter_set_free(fs);
	gf_config_free(c);
	free(p);
}

static void case4(void)
{
	char *p = conf("route.conf",
		       "mixer = { inputs = 2; outputs = 2; paths = (\n"
		       "  { in = 0; out = 1; }, { in = 1; out = 0; gain_db = -6.0; invert = true; } ); };\n");
	struct gf_config *c;
	struct gf_filter_set *fs;
	struct gf_errbuf eb = {""};
	int r = load_build(p, &c, &fs, &eb);
	printf("case 4 (a routing mixer without filters): %s %s\n", r ? "REFUSED" : "built", eb.msg);
	CHECK_OK_EB(r, &eb);
	CHECK(fs->channels == 2 && fs->path_out[0] == 1 && fs->path_out[1] == 0);
	CHECK(fabs(gf_filter_set_channel(fs, 1)[0] + 0.501187f) < 1e-5f);
	gf_filter_set_free(fs);
	gf_config_free(c);
	free(p);
	p = conf(
		"route2.conf",
		"mixer = { inputs = 1; outputs = 1; paths = ( { in = 0; out = 0; chain = [\"x\"]; } ); };\n");
	expect_fail(4, "a routing mixer naming a filter that is not there", p, "\"x\"", NULL);
	free(p);
}

/* The daemon's start-up volume with the state file @p text (@p len bytes); its log in @p log. */
static double start_volume(const char *text, size_t len, char *log, size_t log_size)
{
	char *state = gf_test_path(dir, "state"), *logf = gf_test_path(dir, "log");
	gf_test_write_file(state, text, len);
	char cfg[1024];
	snprintf(cfg, sizeof(cfg),
		 "filters = ( { name = \"g\"; design = \"identity\"; } );\nchain = [\"g\"];\n"
		 "volume_db = -6.0;\nstate_file = \"%s\";\n",
		 state);
	struct daemon d;
	memset(&d, 0, sizeof(d));
	struct gf_errbuf eb = {""};
	CHECK_OK_EB(gf_config_load_string(cfg, dir, &d.cfg, &eb), &eb);
	/* the warning goes to stderr: into a file while the volume starts */
	fflush(stderr);
	int saved = dup(2), fd = open(logf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(saved >= 0 && fd >= 0 && dup2(fd, 2) == 2);
	struct gf_dm_volume_result r;
	CHECK_OK(gf_daemon_volume_get(&d, &r, &eb));
	fflush(stderr);
	CHECK(dup2(saved, 2) == 2);
	close(fd), close(saved);
	log[0] = '\0';
	gf_test_read_file(logf, log, log_size);
	gf_dm_volume_free(&d, 1);
	gf_config_free(d.cfg);
	free(state), free(logf);
	return r.volume_db;
}

static void case5(void)
{
	char log[2048], big[5000];
	memset(big, '#', sizeof(big));
	big[sizeof(big) - 1] = '\n';
	double v = start_volume(big, sizeof(big), log, sizeof(log));
	printf("case 5 (a 5000-byte state file): %.1f dB; %s", v, log);
	CHECK(v == -6.0 && strstr(log, "larger than 4096 bytes") && !strstr(log, "0 MiB"));
	const char *bad[] = {"volume_db = 0x10\nmute = 0\n", "volume_db = inf\nmute = 0\n",
			     "volume_db = 1e1x\nmute = 0\n", "volume_db = -3\nmute = 0x1\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = start_volume(bad[i], strlen(bad[i]), log, sizeof(log));
		printf("case 5 (%.*s): %.1f dB; %s", (int)strcspn(bad[i], "\n"), bad[i], v, log);
		CHECK(v == -6.0 && strstr(log, "corrupt"));
	}
	const char *good = "volume_db = -12.5\nmute = 0\n";
	v = start_volume(good, strlen(good), log, sizeof(log));
	printf("case 5 (volume_db = -12.5): %.1f dB\n", v);
	CHECK(v == -12.5);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	dir = gf_test_tmpdir("hostile-limits");
	case1();
	case2();
	case3();
	case4();
	case5();
	gf_test_rmtree(dir);
	free(dir);
	printf("ok\n");
	return 0;
}
