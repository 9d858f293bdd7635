/*
 * Parametric EQ (peq.h): each RBJ cookbook shape's FIR magnitude against the
 * cookbook's biquad evaluated here independently (complex arithmetic), at
 * 44.1, 48 and 96 kHz; the shapes' analytic values (peak gain at f0, -3 dB
 * of a Butterworth low-pass, notch depth); the error bound, a given taps,
 * linear phase, preamp, minimum phase keeping the magnitude; the band errors.
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "design.h"
#include "minphase.h"
#include "peq.h"
#include "testutil.h"

static double db(double x)
{
	return 20.0 * log10(x + 1e-300);
}

/* The cookbook, written out again: H(e^jw) of one band as b(z) / a(z). */
static double complex rbj(const struct gf_peq_band *b, double f, double rate)
{
	double w0 = 2.0 * M_PI * b->freq_hz / rate, c = cos(w0), s = sin(w0);
	double a = pow(10.0, b->gain_db / 40.0), q = b->q ? b->q : GF_PEQ_DEFAULT_Q;
	double al = b->bw_oct  ? s * sinh(log(2.0) / 2.0 * b->bw_oct * w0 / s)
		    : b->slope ? s / 2.0 * sqrt((a + 1.0 / a) * (1.0 / b->slope - 1.0) + 2.0)
			       : s / (2.0 * q);
	double sa = 2.0 * sqrt(a) * al, n[3], d[3] = {1.0 + al, -2.0 * c, 1.0 - al};
	switch (b->type) {
	case GF_PEQ_PEAKING:
		n[0] = 1 + al * a, n[1] = -2 * c, n[2] = 1 - al * a, d[0] = 1 + al / a, d[2] = 1 - al / a;
		break;
	case GF_PEQ_LOWSHELF:
		n[0] = a * ((a + 1) - (a - 1) * c + sa), n[1] = 2 * a * ((a - 1) - (a + 1) * c);
		n[2] = a * ((a + 1) - (a - 1) * c - sa), d[0] = (a + 1) + (a - 1) * c + sa;
		d[1] = -2 * ((a - 1) + (a + 1) * c), d[2] = (a + 1) + (a - 1) * c - sa;
		break;
	case GF_PEQ_HIGHSHELF:
		n[0] = a * ((a + 1) + (a - 1) * c + sa), n[1] = -2 * a * ((a - 1) + (a + 1) * c);
		n[2] = a * ((a + 1) + (a - 1) * c - sa), d[0] = (a + 1) - (a - 1) * c + sa;
		d[1] = 2 * ((a - 1) - (a + 1) * c), d[2] = (a + 1) - (a - 1) * c - sa;
		break;
	case GF_PEQ_LOWPASS:
		n[0] = (1 - c) / 2, n[1] = 1 - c, n[2] = (1 - c) / 2;
		break;
	case GF_PEQ_HIGHPASS:
		n[0] = (1 + c) / 2, n[1] = -(1 + c), n[2] = (1 + c) / 2;
		break;
	case GF_PEQ_BANDPASS:
		n[0] = al, n[1] = 0, n[2] = -al;
		break;
	case GF_PEQ_NOTCH:
		n[0] = 1, n[1] = -2 * c, n[2] = 1;
		break;
	default: /* all-pass */
		n[0] = 1 - al, n[1] = -2 * c, n[2] = 1 + al;
		break;
	}
	double complex z1 = cexp(-I * 2.0 * M_PI * f / rate), z2 = z1 * z1;
	return (n[0] + n[1] * z1 + n[2] * z2) / (d[0] + d[1] * z1 + d[2] * z2);
}

static double reference(const struct gf_peq *p, double f, double rate)
{
	double g = pow(10.0, p->preamp_db / 20.0);
	for (uint32_t i = 0; i < p->n; i++)
		g *= cabs(rbj(&p->bands[i], f, rate));
	return g;
}

static double *design(const struct gf_peq *p, double rate, uint32_t taps, uint32_t *n,
		      struct gf_peq_report *rep)
{
	double *h;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_peq_design(p, rate, taps, &h, n, rep, &eb), &eb);
	return h;
}

/* Symmetric, or antisymmetric (an odd number of band-pass bands); odd length either way. */
static void check_linear_phase(const double *h, uint32_t n, int anti)
{
	CHECK(n % 2 == 1);
	double peak = 0.0;
	for (uint32_t i = 0; i < n; i++)
		peak = fmax(peak, fabs(h[i]));
	for (uint32_t i = 0; i < n / 2; i++)
		CHECK(fabs(h[i] - (anti ? -1.0 : 1.0) * h[n - 1 - i]) <= 1e-9 * peak);
}

/*
 * Largest |dB error| of the FIR against the reference at frequencies log-spaced
 * from 10 Hz to 0.999 Nyquist and around f0, where the reference is above -60 dB;
 * below it the FIR must be no louder than the reference plus 0.1% of full scale.
 */
static double worst_error(const double *h, uint32_t n, const struct gf_peq *p, double rate, double f0)
{
	double worst = 0.0;
	for (int i = 0; i < 240; i++) {
		double f = i < 200 ? 10.0 * pow(rate / 2.0 * 0.999 / 10.0, i / 199.0)
				   : f0 * (0.9 + 0.005 * (i - 200));
		double want = reference(p, f, rate), got = gf_design_response(h, n, f, rate);
		if (want > 1e-3)
			worst = fmax(worst, fabs(db(got) - db(want)));
		else
			CHECK(got <= want + 1e-3);
	}
	return worst;
}

struct shape {
	struct gf_peq_band band;
	double at_f0_db; /* the shape's analytic gain at f0 (NAN: none checked) */
};

static const struct shape shapes[] = {
	{{GF_PEQ_PEAKING, 105.0, -3.2, 0.7, 0, 0, 1, 0}, -3.2},
	{{GF_PEQ_PEAKING, 2500.0, 9.0, 4.0, 0, 0, 1, 0}, 9.0},
	{{GF_PEQ_PEAKING, 1000.0, -12.0, 0, 1.0, 0, 1, 0}, -12.0},
	{{GF_PEQ_LOWSHELF, 120.0, 6.0, 0.7, 0, 0, 1, 0}, 3.0}, /* half the gain at f0 */
	{{GF_PEQ_LOWSHELF, 300.0, -4.0, 0, 0, 0.5, 1, 0}, -2.0},
	{{GF_PEQ_HIGHSHELF, 8000.0, -5.0, 0.7, 0, 0, 1, 0}, -2.5},
	{{GF_PEQ_LOWPASS, 5000.0, 0, GF_PEQ_DEFAULT_Q, 0, 0, 0, 0}, -3.0103},
	{{GF_PEQ_HIGHPASS, 40.0, 0, GF_PEQ_DEFAULT_Q, 0, 0, 0, 0}, -3.0103},
	{{GF_PEQ_HIGHPASS, 200.0, 0, 2.0, 0, 0, 0, 0}, 6.0206}, /* |H(f0)| = Q */
	{{GF_PEQ_BANDPASS, 1000.0, 0, 2.0, 0, 0, 0, 0}, 0.0},
	{{GF_PEQ_NOTCH, 60.0, 0, 30.0, 0, 0, 0, 0}, NAN},
	{{GF_PEQ_NOTCH, 3000.0, 0, 0, 0.3, 0, 0, 0}, NAN},
	{{GF_PEQ_ALLPASS, 1000.0, 0, 1.0, 0, 0, 0, 0}, 0.0},
};

static void test_shapes(void)
{
	const double rates[] = {44100.0, 48000.0, 96000.0};
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		for (int ri = 0; ri < 3; ri++) {
			struct gf_peq p = {0};
			struct gf_errbuf eb = {{0}};
			struct gf_peq_band b = shapes[s].band;
			CHECK_OK_EB(gf_peq_band_finish(&b, &eb), &eb);
			CHECK_OK_EB(gf_peq_add(&p, &b, &eb), &eb);
			uint32_t n;
			struct gf_peq_report rep;
			double *h = design(&p, rates[ri], 0, &n, &rep);
			double err = worst_error(h, n, &p, rates[ri], b.freq_hz);
			double at = db(gf_design_response(h, n, b.freq_hz, rates[ri]));
			printf("  %-9s %6.0f Hz at %5.0f Hz: %7u taps, grid %.4f dB, measured %.4f dB, %+.3f "
			       "dB "
			       "at f0\n",
			       gf_peq_type_name(b.type), b.freq_hz, rates[ri], n, rep.max_err_db, err, at);
			CHECK(rep.taps == n && rep.max_err_db <= GF_PEQ_MAX_ERR_DB);
			CHECK(err <= GF_PEQ_MAX_ERR_DB);
			if (!isnan(shapes[s].at_f0_db) && b.type != GF_PEQ_LOWSHELF &&
			    b.type != GF_PEQ_HIGHSHELF)
				CHECK(fabs(at - shapes[s].at_f0_db) <= GF_PEQ_MAX_ERR_DB);
			if (b.type == GF_PEQ_LOWSHELF ||
			    b.type == GF_PEQ_HIGHSHELF) /* shelf: half at f0, all at the end */
				CHECK(fabs(at - shapes[s].at_f0_db) <= 0.05 &&
				      fabs(db(gf_design_response(
						   h, n, b.type == GF_PEQ_LOWSHELF ? 0.0 : rates[ri] / 2,
						   rates[ri])) -
					   b.gain_db) <= 0.05);
			if (b.type == GF_PEQ_NOTCH)
				CHECK(at < -100.0); /* the zeros are exact */
			check_linear_phase(h, n, b.type == GF_PEQ_BANDPASS);
			free(h);
			gf_peq_free(&p);
		}
	}
}

/* AutoEQ-like cascade with a preamp: every band's magnitude multiplies, preamp scales all. */
static void test_cascade_and_preamp(void)
{
	struct gf_peq p = {0};
	struct gf_errbuf eb = {{0}};
	const struct gf_peq_band bands[] = {
		{GF_PEQ_LOWSHELF, 105.0, 5.5, 0.7, 0, 0, 1, 0},
		{GF_PEQ_PEAKING, 190.0, -2.6, 0.57, 0, 0, 1, 0},
		{GF_PEQ_PEAKING, 5430.0, 4.4, 3.78, 0, 0, 1, 0},
		{GF_PEQ_HIGHSHELF, 10000.0, -2.1, 0.7, 0, 0, 1, 0},
		{GF_PEQ_NOTCH, 50.0, 0, 10.0, 0, 0, 0, 0},
		{GF_PEQ_BANDPASS, 3000.0, 0, 0.3, 0, 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof(bands) / sizeof(bands[0]); i++)
		CHECK_OK_EB(gf_peq_add(&p, &bands[i], &eb), &eb);
	uint32_t n0, n1;
	struct gf_peq_report rep;
	double *h0 = design(&p, 48000.0, 0, &n0, &rep);
	CHECK(worst_error(h0, n0, &p, 48000.0, 5430.0) <= GF_PEQ_MAX_ERR_DB);
	check_linear_phase(h0, n0, 1);
	p.preamp_db = -6.2;
	double *h1 = design(&p, 48000.0, 0, &n1, &rep);
	CHECK(n1 == n0);
	double g = pow(10.0, -6.2 / 20.0);
	for (uint32_t i = 0; i < n0; i++)
		CHECK(fabs(h1[i] - g * h0[i]) <= 1e-12);
	CHECK(worst_error(h1, n1, &p, 48000.0, 105.0) <= GF_PEQ_MAX_ERR_DB);
	printf("  cascade of 6 bands, preamp -6.2 dB: %u taps, grid %.4f dB\n", n1, rep.max_err_db);
	free(h0), free(h1);
	/* no bands: the preamp alone, one tap */
	struct gf_peq only = {.preamp_db = -3.0};
	double *h = design(&only, 48000.0, 0, &n0, &rep);
	CHECK(n0 == 1 && fabs(h[0] - pow(10.0, -3.0 / 20.0)) < 1e-12);
	free(h);
	gf_peq_free(&p);
}

/* A given taps is used as is and its error reported; too short is measurably worse. */
static void test_given_taps(void)
{
	struct gf_peq p = {0};
	struct gf_errbuf eb = {{0}};
	struct gf_peq_band b = {GF_PEQ_PEAKING, 100.0, 6.0, 2.0, 0, 0, 1, 0};
	CHECK_OK_EB(gf_peq_add(&p, &b, &eb), &eb);
	uint32_t n, nd;
	struct gf_peq_report rep, repd;
	double *hd = design(&p, 48000.0, 0, &nd, &repd);
	double *h = design(&p, 48000.0, 255, &n, &rep);
	CHECK(n == 255 && rep.taps == 255);
	CHECK(rep.max_err_db > 1.0); /* 255 taps cannot hold a Q 2 peak at 100 Hz */
	CHECK(gf_peq_taps_estimate(&p, 48000.0, 0) <= nd && gf_peq_taps_estimate(&p, 48000.0, 255) == 255);
	printf("  100 Hz Q 2 +6 dB: derived %u taps (%.4f dB), 255 taps %.2f dB\n", nd, repd.max_err_db,
	       rep.max_err_db);
	free(h), free(hd);
	double *x;
	CHECK(gf_peq_design(&p, 48000.0, 256, &x, &n, &rep, &eb) == GF_E_CONFIG && strstr(eb.msg, "taps: "));
	CHECK(gf_peq_design(&p, 48000.0, GF_PEQ_MAX_TAPS + 2, &x, &n, &rep, &eb) == GF_E_CONFIG &&
	      strstr(eb.msg, "at most 1048575"));
	gf_peq_free(&p);
}

/* phase = "minimum" keeps the magnitude (the FIR's, hence the bands' within the bound). */
static void test_minimum_phase(void)
{
	struct gf_peq p = {.preamp_db = -2.0};
	struct gf_errbuf eb = {{0}};
	const struct gf_peq_band bands[] = {{GF_PEQ_LOWSHELF, 80.0, 4.0, 0.7, 0, 0, 1, 0},
					    {GF_PEQ_PEAKING, 2000.0, -6.0, 1.5, 0, 0, 1, 0},
					    {GF_PEQ_HIGHPASS, 30.0, 0, 0.7071, 0, 0, 0, 0}};
	for (size_t i = 0; i < 3; i++)
		CHECK_OK_EB(gf_peq_add(&p, &bands[i], &eb), &eb);
	uint32_t n;
	struct gf_peq_report rep;
	double *h = design(&p, 48000.0, 0, &n, &rep);
	CHECK_OK_EB(gf_minphase(h, n, &eb), &eb);
	double err = worst_error(h, n, &p, 48000.0, 2000.0);
	double energy = 0.0, early = 0.0;
	for (uint32_t i = 0; i < n; i++)
		energy += h[i] * h[i], early += i < n / 8 ? h[i] * h[i] : 0.0;
	printf("  minimum phase: %u taps, %.4f dB from the bands, %.1f%% of the energy in the first eighth\n",
	       n, err, 100.0 * early / energy);
	CHECK(err <= GF_PEQ_MAX_ERR_DB + 0.01);
	CHECK(early > 0.99 * energy); /* no longer centred: minimum phase */
	free(h);
	gf_peq_free(&p);
}

static void test_band_errors(void)
{
	struct {
		struct gf_peq_band b;
		const char *msg;
	} bad[] = {
		{{GF_PEQ_PEAKING, 0.0, 1.0, 1.0, 0, 0, 1, 0}, "freq_hz: "},
		{{GF_PEQ_PEAKING, 100.0, 0, 1.0, 0, 0, 0, 0}, "gain_db: a peaking band needs"},
		{{GF_PEQ_LOWPASS, 100.0, 3.0, 1.0, 0, 0, 1, 0}, "gain_db: a lowpass band has no gain"},
		{{GF_PEQ_PEAKING, 100.0, 1.0, -1.0, 0, 0, 1, 0}, "q: must be above 0"},
		{{GF_PEQ_PEAKING, 100.0, 1.0, 0, 0, 0, 1, 0}, "q: a peaking band needs q"},
		{{GF_PEQ_NOTCH, 100.0, 0, 1.0, 1.0, 0, 0, 0}, "takes one of"},
		{{GF_PEQ_PEAKING, 100.0, 1.0, 0, 0, 0.5, 1, 0}, "slope: only a shelf"},
		{{GF_PEQ_LOWSHELF, 100.0, 1.0, 0, 0, 1.5, 1, 0}, "slope: must be"},
		{{GF_PEQ_PEAKING, 100.0, 45.0, 1.0, 0, 0, 1, 0}, "-60..30 dB"},
		{{(enum gf_peq_type)99, 100.0, 0, 1.0, 0, 0, 0, 0}, "type: unknown"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gf_errbuf eb = {{0}};
		CHECK(gf_peq_band_finish(&bad[i].b, &eb) == GF_E_CONFIG);
		printf("  band error: %s\n", eb.msg);
		CHECK(strstr(eb.msg, bad[i].msg));
	}
	/* at the rate: above Nyquist, and a band the length limit cannot hold */
	struct gf_peq p = {0};
	struct gf_errbuf eb = {{0}};
	struct gf_peq_band ok = {GF_PEQ_PEAKING, 1000.0, 1.0, 1.0, 0, 0, 1, 0};
	struct gf_peq_band hi = {GF_PEQ_PEAKING, 30000.0, 1.0, 1.0, 0, 0, 1, 0};
	CHECK_OK(gf_peq_add(&p, &ok, &eb));
	CHECK_OK(gf_peq_add(&p, &hi, &eb));
	double *h = NULL;
	uint32_t n;
	struct gf_peq_report rep;
	CHECK(gf_peq_design(&p, 48000.0, 0, &h, &n, &rep, &eb) == GF_E_CONFIG && h == NULL);
	CHECK(rep.band == 1 && strstr(eb.msg, "freq_hz: 30000 Hz is not below half the sample rate"));
	CHECK_OK(gf_peq_design(&p, 96000.0, 0, &h, &n, &rep, &eb));
	free(h);
	p.bands[0] = (struct gf_peq_band){GF_PEQ_PEAKING, 10.0, 12.0, 100.0, 0, 0, 1, 0};
	p.n = 1;
	CHECK(gf_peq_design(&p, 96000.0, 0, &h, &n, &rep, &eb) == GF_E_CONFIG && rep.band == 0);
	printf("  length error: %s\n", eb.msg);
	CHECK(strstr(eb.msg, "bands: staying within 0.05 dB"));
	p.bands[0].freq_hz = 1e-300; /* its poles round onto the unit circle */
	CHECK(gf_peq_design(&p, 48000.0, 0, &h, &n, &rep, &eb) == GF_E_CONFIG && rep.band == 0);
	gf_peq_free(&p);
}

int main(void)
{
	test_shapes();
	test_cascade_and_preamp();
	test_given_taps();
	test_minimum_phase();
	test_band_errors();
	printf("test_peq: OK\n");
	return 0;
}
