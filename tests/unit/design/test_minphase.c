/*
 * Minimum-phase conversion (minphase.c) against references: a closed form
 * (g * reverse(g) -> g * g for a minimum-phase g) and SciPy's minimum_phase,
 * both computed by tests/unit/design/minphase_ref.py; then designed filters keep their
 * magnitude (0.1 dB where the linear-phase response is above -60 dB, the
 * same stopband attenuation) and lose their delay.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "design.h"
#include "minphase.h"
#include "taps_io.h"
#include "testutil.h"

static const double RATE = 48000.0;

static double db(double x)
{
	return 20.0 * log10(x + 1e-300);
}

static double *read_taps(const char *dir, const char *name, uint32_t *n)
{
	char *p = gf_test_path(dir, name);
	double *h = NULL;
	struct gf_errbuf eb;
	CHECK_OK_EB(gf_taps_read_text(p, &h, n, &eb), &eb);
	free(p);
	return h;
}

static double max_abs_diff(const double *a, const double *b, uint32_t n, double *peak)
{
	double e = 0.0;
	*peak = 0.0;
	for (uint32_t i = 0; i < n; i++) {
		e = fmax(e, fabs(a[i] - b[i]));
		*peak = fmax(*peak, fabs(b[i]));
	}
	return e;
}

static void test_against_references(void)
{
	char *dir = gf_test_tmpdir("minphase");
	const char *src = getenv("GPUFIR_SOURCE_DIR");
	char cmd[1024];
	/* Debian's python3 has numpy and SciPy (install-deps.sh); one first on PATH may not */
	const char *py = getenv("PYTHON")			 ? getenv("PYTHON")
			 : access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3"
								 : "python3";
	snprintf(cmd, sizeof(cmd), "%s %s/tests/unit/design/minphase_ref.py %s", py, src ? src : "..", dir);
	if (system(cmd) != 0)
		gf_test_skip("python3 with numpy and scipy is needed for the reference filters");
	uint32_t n, nc, ns;
	double *h = read_taps(dir, "lin.txt", &n), *closed = read_taps(dir, "closed.txt", &nc),
	       *sp = read_taps(dir, "scipy.txt", &ns);
	CHECK(n == nc && n == ns);
	CHECK_OK(gf_minphase(h, n, NULL));
	double peak, e_closed = max_abs_diff(h, closed, n, &peak), e_scipy = max_abs_diff(h, sp, n, &peak);
	printf("minphase: %u taps: max |error| vs closed form %.3g, vs SciPy %.3g (peak %.3g)\n", n, e_closed,
	       e_scipy, peak);
	CHECK(e_closed < 1e-7 * peak); /* below float32 rounding of the stored taps */
	CHECK(e_scipy < 1e-6 * peak);  /* SciPy's own FFT length bounds its accuracy */
	free(h);
	free(closed);
	free(sp);
	gf_test_rmtree(dir);
	free(dir);
}

/*
 * Magnitude of @p mp against @p lin: the largest dB error where lin is above
 * -60 dB, and the largest gain of each in [stop0, stop1].
 */
static void compare(const double *lin, const double *mp, uint32_t n, double stop0, double stop1,
		    double *err_db, double *stop_lin, double *stop_mp)
{
	*err_db = 0.0;
	*stop_lin = *stop_mp = -INFINITY;
	for (int i = 0; i <= 3000; i++) {
		double f = 0.5 * RATE * i / 3000.0;
		double gl = db(gf_design_response(lin, n, f, RATE)),
		       gm = db(gf_design_response(mp, n, f, RATE));
		if (gl > -60.0)
			*err_db = fmax(*err_db, fabs(gl - gm));
		if (f >= stop0 && f <= stop1) {
			*stop_lin = fmax(*stop_lin, gl);
			*stop_mp = fmax(*stop_mp, gm);
		}
	}
}

static void test_design(enum gf_design_type t, double cutoff, double tw, double atten, double stop0,
			double stop1)
{
	struct gf_design d;
	gf_design_init(&d, t);
	d.cutoff_hz = cutoff;
	d.transition_hz = tw;
	d.attenuation_db = atten;
	double *lin, *mp;
	uint32_t n;
	struct gf_errbuf eb;
	CHECK_OK_EB(gf_design_run(&d, RATE, &lin, &n, &eb), &eb);
	CHECK((mp = malloc(n * sizeof(double))));
	memcpy(mp, lin, n * sizeof(double));
	CHECK_OK(gf_minphase(mp, n, NULL));
	double err, sl, sm;
	compare(lin, mp, n, stop0, stop1, &err, &sl, &sm);
	double gd_lin = gf_group_delay(lin, n, 1000.0, RATE), gd_mp = gf_group_delay(mp, n, 1000.0, RATE);
	printf("minphase: %s %g Hz, %u taps: magnitude error %.4f dB (above -60 dB); stopband %.1f dB "
	       "(linear %.1f dB); group delay at 1 kHz %.2f ms (linear %.2f ms)\n",
	       gf_design_type_name(t), cutoff, n, err, sm, sl, 1e3 * gd_mp / RATE, 1e3 * gd_lin / RATE);
	CHECK(err < 0.1);
	CHECK(sm < sl + 0.5);
	CHECK(fabs(gd_lin - (n - 1) / 2.0) < 1e-6 * n);
	CHECK(gd_mp < 0.25 * gd_lin);
	/* the minimum-phase property: energy arrives no later than in any filter of this magnitude */
	double el = 0.0, em = 0.0, total = 0.0;
	for (uint32_t i = 0; i < n; i++)
		total += lin[i] * lin[i];
	for (uint32_t i = 0; i < n; i++) {
		el += lin[i] * lin[i];
		em += mp[i] * mp[i];
		CHECK(em >= el - 1e-6 * total);
	}
	CHECK(fabs(em - el) < 1e-6 * el);
	free(lin);
	free(mp);
}

static void test_notch(void)
{
	struct gf_design d;
	gf_design_init(&d, GF_DESIGN_NOTCH);
	d.freq_hz[0] = 50.0;
	d.n_freq = 1;
	d.harmonics = 4;
	d.bandwidth_hz = 15.0;
	d.attenuation_db = 40.0;
	double *h;
	uint32_t n;
	struct gf_errbuf eb;
	CHECK_OK_EB(gf_design_run(&d, RATE, &h, &n, &eb), &eb);
	CHECK_OK(gf_minphase(h, n, NULL));
	double worst = -INFINITY;
	for (int k = 1; k <= 4; k++)
		worst = fmax(worst, db(gf_design_response(h, n, 50.0 * k, RATE)));
	double gmin, gmax, gmean;
	CHECK(gf_group_delay_band(h, n, RATE, 300.0, 3000.0, 64, &gmin, &gmax, &gmean) == 64);
	printf("minphase: notch 50 Hz x4, %u taps: deepest-to-shallowest notch %.1f dB; group delay "
	       "300 Hz-3 kHz %.2f..%.2f ms (linear %.1f ms)\n",
	       n, worst, 1e3 * gmin / RATE, 1e3 * gmax / RATE, 1e3 * (n - 1) / 2.0 / RATE);
	CHECK(worst < -85.0); /* exact zeros in linear phase; the FFT grid misses the zero itself */
	CHECK(gmax < 0.1 * (n - 1) / 2.0);
	free(h);
}

static void test_edges(void)
{
	double one = -0.5, zeros[4] = {0};
	CHECK_OK(gf_minphase(&one, 1, NULL));
	CHECK(one == 0.5);
	CHECK(gf_minphase(zeros, 4, NULL) == GF_E_INVAL);
	/* a pure delay is minimum phase at zero delay: one tap of 1.0 first */
	double dl[9] = {0, 0, 0, 0, 1.0, 0, 0, 0, 0};
	CHECK_OK(gf_minphase(dl, 9, NULL));
	CHECK(fabs(dl[0] - 1.0) < 1e-9);
	for (int i = 1; i < 9; i++)
		CHECK(fabs(dl[i]) < 1e-9);
}

int main(void)
{
	test_edges();
	test_against_references();
	test_design(GF_DESIGN_LOWPASS, 8000.0, 1000.0, 80.0, 8500.0, 24000.0);
	test_design(GF_DESIGN_HIGHPASS, 60.0, 80.0, 40.0, 0.0, 20.0);
	test_design(GF_DESIGN_LOWPASS, 14000.0, 2000.0, 60.0, 15000.0, 24000.0);
	test_notch();
	printf("test_minphase: OK\n");
	return 0;
}
