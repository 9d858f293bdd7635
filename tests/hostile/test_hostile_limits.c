/*
 * Hostile round four: designs and small limits whose answer was wrong, in
 * process through gf_config_load / gf_config_build (what a reload runs).
 * Each case prints what it tried.
 *
 *   1  close notches (50, 100, 150 Hz, Q 5; four at 200..440 Hz, Q 10),
 *      whose divided-out zeros multiply into peaks no double-precision FFT
 *      resolves: they build, within the bound of the exact cascade (checked
 *      here at 600 frequencies against gf_peq_response), with their notches
 *      deep (they were refused: "would need more than 1048575 taps")
 *   2  a high-pass at 23999.999 Hz (48 kHz) is refused with advice to lower
 *      its frequency (it used to say "raise")
 */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
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

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	dir = gf_test_tmpdir("hostile-limits");
	case1();
	case2();
	gf_test_rmtree(dir);
	free(dir);
	printf("ok\n");
	return 0;
}
