#include "design.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "denoise.h"
#include "peq.h"

static const char *const type_names[] = {
	[GF_DESIGN_LOWPASS] = "lowpass",       [GF_DESIGN_HIGHPASS] = "highpass",
	[GF_DESIGN_BANDPASS] = "bandpass",     [GF_DESIGN_BANDSTOP] = "bandstop",
	[GF_DESIGN_NOTCH] = "notch",	       [GF_DESIGN_IDENTITY] = "identity",
	[GF_DESIGN_DELAY] = "delay",	       [GF_DESIGN_DENOISE] = "denoise",
	[GF_DESIGN_SUPPRESS] = "suppress",     [GF_DESIGN_PEQ] = "peq",
	[GF_DESIGN_DEEPFILTER] = "deepfilter",
};

void gf_design_init(struct gf_design *d, enum gf_design_type type)
{
	memset(d, 0, sizeof(*d));
	d->type = type;
	d->attenuation_db = GF_DESIGN_DEFAULT_ATTENUATION_DB;
	d->harmonics = 1;
}

int gf_design_parse_type(const char *s, enum gf_design_type *out)
{
	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++) {
		if (strcmp(s, type_names[i]) == 0) {
			*out = (enum gf_design_type)i;
			return 0;
		}
	}
	return GF_E_INVAL;
}

const char *gf_design_type_name(enum gf_design_type t)
{
	if ((unsigned)t < sizeof(type_names) / sizeof(type_names[0]))
		return type_names[t];
	return "unknown";
}

/* Modified Bessel function of the first kind, order 0 (power series). */
static double bessel_i0(double x)
{
	double sum = 1.0, term = 1.0, q = x * x / 4.0;
	for (int k = 1; k < 500; k++) {
		term *= q / ((double)k * (double)k);
		sum += term;
		if (term < sum * 1e-17)
			break;
	}
	return sum;
}

double gf_design_kaiser_beta(double a)
{
	if (a > 50.0)
		return 0.1102 * (a - 8.7);
	if (a >= 21.0)
		return 0.5842 * pow(a - 21.0, 0.4) + 0.07886 * (a - 21.0);
	return 0.0;
}

uint32_t gf_design_kaiser_taps(double a, double tw, double rate)
{
	/* Kaiser's formula: N - 1 = (A - 7.95) / (2.285 * delta_omega). */
	double dw = 2.0 * M_PI * tw / rate;
	double n = a > 21.0 ? (a - 7.95) / (2.285 * dw) : 5.79 / dw;
	n = ceil(n) + 1.0;
	if (!(n <= (double)GF_DESIGN_MAX_TAPS))
		return 0;
	uint32_t taps = (uint32_t)n;
	return taps | 1u;
}

double gf_design_kaiser_transition_hz(double a, uint32_t taps, double rate)
{
	double num = a > 21.0 ? (a - 7.95) / 2.285 : 5.79;
	return num / (double)(taps > 1 ? taps - 1 : 1) * rate / (2.0 * M_PI);
}

double gf_design_response(const double *h, uint32_t n, double freq_hz, double rate)
{
	double w = 2.0 * M_PI * freq_hz / rate, re = 0.0, im = 0.0;
	for (uint32_t k = 0; k < n; k++) {
		re += h[k] * cos(w * k);
		im -= h[k] * sin(w * k);
	}
	return hypot(re, im);
}

static void kaiser_window(double *w, uint32_t n, double beta)
{
	if (n == 1) {
		w[0] = 1.0;
		return;
	}
	double den = bessel_i0(beta);
	for (uint32_t i = 0; i < n; i++) {
		double r = 2.0 * i / (double)(n - 1) - 1.0;
		double s = 1.0 - r * r;
		w[i] = bessel_i0(beta * sqrt(s > 0.0 ? s : 0.0)) / den;
	}
}

/* Ideal low-pass (cutoff fc, unity DC gain) times window, centred at (n-1)/2. */
static void windowed_lowpass(double *h, const double *w, uint32_t n, double fc, double rate)
{
	double f = 2.0 * fc / rate;
	double m = (n - 1) / 2.0;
	for (uint32_t i = 0; i < n; i++) {
		double x = (double)i - m;
		h[i] = w[i] * (x == 0.0 ? f : sin(M_PI * f * x) / (M_PI * x));
	}
}

/* Zero-phase gain of a symmetric odd-length filter at f (real because symmetric). */
static double zero_phase_gain(const double *h, uint32_t n, double f, double rate)
{
	uint32_t m = (n - 1) / 2;
	double w = 2.0 * M_PI * f / rate, g = h[m];
	for (uint32_t k = 1; k <= m; k++)
		g += 2.0 * h[m + k] * cos(w * k);
	return g;
}

static int check_freq(const char *key, double f, double rate, struct gf_errbuf *eb)
{
	if (!(f > 0.0)) {
		gf_errbuf_set(eb, "%s: must be above 0 Hz (got %g)", key, f);
		return GF_E_CONFIG;
	}
	if (!(f < rate / 2.0)) {
		gf_errbuf_set(eb, "%s: %g Hz is not below half the sample rate (%g Hz at %g Hz)", key, f,
			      rate / 2.0, rate);
		return GF_E_CONFIG;
	}
	return 0;
}

/* Taps of a windowed-sinc design: given, or from transition_hz by Kaiser's formula. */
static int sinc_taps(const struct gf_design *d, double rate, uint32_t *n, struct gf_errbuf *eb)
{
	if (d->taps) {
		if (!(d->taps & 1u)) {
			gf_errbuf_set(eb, "taps: must be odd for a linear-phase %s (got %u)",
				      gf_design_type_name(d->type), d->taps);
			return GF_E_CONFIG;
		}
		*n = d->taps;
		return 0;
	}
	if (!(d->transition_hz > 0.0)) {
		gf_errbuf_set(eb, "taps: %s needs taps or transition_hz", gf_design_type_name(d->type));
		return GF_E_CONFIG;
	}
	if (!(d->transition_hz < rate / 2.0)) {
		gf_errbuf_set(eb, "transition_hz: %g Hz is not below half the sample rate (%g Hz)",
			      d->transition_hz, rate / 2.0);
		return GF_E_CONFIG;
	}
	*n = gf_design_kaiser_taps(d->attenuation_db, d->transition_hz, rate);
	if (*n == 0) {
		gf_errbuf_set(eb, "transition_hz: %g Hz at %g dB needs more than %u taps", d->transition_hz,
			      d->attenuation_db, GF_DESIGN_MAX_TAPS);
		return GF_E_CONFIG;
	}
	return 0;
}

static int check_sinc_params(const struct gf_design *d, double rate, struct gf_errbuf *eb)
{
	int err;
	if (d->type == GF_DESIGN_LOWPASS || d->type == GF_DESIGN_HIGHPASS)
		return check_freq("cutoff_hz", d->cutoff_hz, rate, eb);
	if ((err = check_freq("low_hz", d->low_hz, rate, eb)) ||
	    (err = check_freq("high_hz", d->high_hz, rate, eb)))
		return err;
	if (!(d->low_hz < d->high_hz)) {
		gf_errbuf_set(eb, "high_hz: must be above low_hz (%g <= %g)", d->high_hz, d->low_hz);
		return GF_E_CONFIG;
	}
	return 0;
}

/* Scale so the gain is exactly 1 at the middle of the (first) passband. */
static void normalise(double *h, uint32_t n, double f, double rate)
{
	double g = zero_phase_gain(h, n, f, rate);
	if (g != 0.0)
		for (uint32_t i = 0; i < n; i++)
			h[i] /= g;
}

static int design_sinc(const struct gf_design *d, double rate, double **out, uint32_t *nout,
		       struct gf_errbuf *eb)
{
	uint32_t n;
	int err = check_sinc_params(d, rate, eb);
	if (err || (err = sinc_taps(d, rate, &n, eb)))
		return err;
	double *h = calloc(n, sizeof(double));
	double *w = malloc(n * sizeof(double));
	double *t = d->type == GF_DESIGN_LOWPASS || d->type == GF_DESIGN_HIGHPASS
			    ? NULL
			    : malloc(n * sizeof(double));
	if (!h || !w || (!t && d->type != GF_DESIGN_LOWPASS && d->type != GF_DESIGN_HIGHPASS)) {
		free(h), free(w), free(t);
		return GF_E_NOMEM;
	}
	kaiser_window(w, n, gf_design_kaiser_beta(d->attenuation_db));
	uint32_t m = (n - 1) / 2;
	switch (d->type) {
	case GF_DESIGN_LOWPASS:
		windowed_lowpass(h, w, n, d->cutoff_hz, rate);
		normalise(h, n, 0.0, rate);
		break;
	case GF_DESIGN_HIGHPASS: /* spectral inversion of the low-pass */
		windowed_lowpass(h, w, n, d->cutoff_hz, rate);
		for (uint32_t i = 0; i < n; i++)
			h[i] = -h[i];
		h[m] += w[m];
		normalise(h, n, rate / 2.0, rate);
		break;
	default: /* band-pass = lp(high) - lp(low); band-stop is its inversion */
		windowed_lowpass(h, w, n, d->high_hz, rate);
		windowed_lowpass(t, w, n, d->low_hz, rate);
		for (uint32_t i = 0; i < n; i++)
			h[i] -= t[i];
		if (d->type == GF_DESIGN_BANDSTOP) {
			for (uint32_t i = 0; i < n; i++)
				h[i] = -h[i];
			h[m] += w[m];
			normalise(h, n, 0.0, rate);
		} else {
			normalise(h, n, (d->low_hz + d->high_hz) / 2.0, rate);
		}
		break;
	}
	free(w), free(t);
	*out = h;
	*nout = n;
	return 0;
}

/*
 * Half -3 dB width, in bins of rate/N, of a notch made by subtracting a
 * Kaiser-windowed cosine: where the window's normalised transform falls to
 * 1 - 1/sqrt(2). Uses the continuous Kaiser transform (exact enough for N > 50).
 */
static double notch_half_width_bins(double beta)
{
	double target = 1.0 - M_SQRT1_2, lo = 0.0, hi = sqrt(beta * beta + M_PI * M_PI) / M_PI;
	double norm = beta > 0.0 ? sinh(beta) / beta : 1.0;
	for (int it = 0; it < 100; it++) {
		double x = (lo + hi) / 2.0, a = M_PI * x, v;
		if (a < beta) {
			double s = sqrt(beta * beta - a * a);
			v = s > 0.0 ? sinh(s) / s : 1.0;
		} else {
			double s = sqrt(a * a - beta * beta);
			v = s > 0.0 ? sin(s) / s : 1.0;
		}
		if (v / norm > target)
			lo = x;
		else
			hi = x;
	}
	return (lo + hi) / 2.0;
}

static uint32_t notch_len(double width_hz, double bins, double rate)
{
	double n = ceil(2.0 * bins * rate / width_hz);
	if (!(n < (double)GF_DESIGN_MAX_TAPS))
		return 0;
	return (uint32_t)n | 1u;
}

static int check_notch(const struct gf_design *d, double rate, struct gf_errbuf *eb)
{
	if (d->n_freq < 1 || d->n_freq > GF_DESIGN_MAX_FREQS) {
		gf_errbuf_set(eb, "freq_hz: give 1..%d frequencies (got %u)", GF_DESIGN_MAX_FREQS, d->n_freq);
		return GF_E_CONFIG;
	}
	double fmin = d->freq_hz[0];
	for (uint32_t i = 0; i < d->n_freq; i++) {
		int err = check_freq("freq_hz", d->freq_hz[i], rate, eb);
		if (err)
			return err;
		fmin = d->freq_hz[i] < fmin ? d->freq_hz[i] : fmin;
	}
	if (d->harmonics < 1 || d->harmonics > GF_DESIGN_MAX_NOTCHES) {
		gf_errbuf_set(eb, "harmonics: must be 1..%u (got %u)", GF_DESIGN_MAX_NOTCHES, d->harmonics);
		return GF_E_CONFIG;
	}
	int given = (d->taps != 0) + (d->bandwidth_hz != 0.0) + (d->q != 0.0);
	if (given != 1) {
		gf_errbuf_set(eb, "%s: a notch needs exactly one of taps, bandwidth_hz, q",
			      d->taps		       ? "taps"
			      : d->bandwidth_hz != 0.0 ? "bandwidth_hz"
			      : d->q != 0.0	       ? "q"
						       : "freq_hz");
		return GF_E_CONFIG;
	}
	if (d->taps && !(d->taps & 1u)) {
		gf_errbuf_set(eb, "taps: must be odd for a linear-phase notch (got %u)", d->taps);
		return GF_E_CONFIG;
	}
	if (d->bandwidth_hz != 0.0 && !(d->bandwidth_hz > 0.0 && d->bandwidth_hz < fmin)) {
		gf_errbuf_set(eb,
			      "bandwidth_hz: must be above 0 and below the lowest freq_hz (%g Hz); got %g",
			      fmin, d->bandwidth_hz);
		return GF_E_CONFIG;
	}
	if (d->q != 0.0 && !(d->q >= 1.0 && d->q <= 10000.0)) {
		gf_errbuf_set(eb, "q: must be 1..10000 (got %g)", d->q);
		return GF_E_CONFIG;
	}
	return 0;
}

/*
 * The notch frequencies: every freq_hz times 1..harmonics below Nyquist,
 * without duplicates (300 Hz is both 6 x 50 and 5 x 60), sorted.
 */
static int notch_freqs(const struct gf_design *d, double rate, double *f, uint32_t *k, struct gf_errbuf *eb)
{
	*k = 0;
	for (uint32_t i = 0; i < d->n_freq; i++) {
		for (uint32_t h = 1; h <= d->harmonics; h++) {
			double x = d->freq_hz[i] * h;
			if (d->keep_set && !d->keep[h])
				continue; /* freq_hz = "auto": only the harmonics found above the noise */
			if (!(x < rate / 2.0))
				break; /* harmonics past Nyquist are dropped */
			uint32_t j = 0;
			while (j < *k && fabs(f[j] - x) > 1e-6 * x)
				j++;
			if (j < *k)
				continue;
			if (*k == GF_DESIGN_MAX_NOTCHES) {
				gf_errbuf_set(eb, "harmonics: more than %d distinct notches",
					      GF_DESIGN_MAX_NOTCHES);
				return GF_E_CONFIG;
			}
			j = *k;
			while (j > 0 && f[j - 1] > x) { /* insertion sort */
				f[j] = f[j - 1];
				j--;
			}
			f[j] = x;
			(*k)++;
		}
	}
	return 0;
}

/* Solve a (k x k) a = 1 by Gaussian elimination with partial pivoting; 0 or -1 if singular. */
static int solve_ones(double *g, double *a, uint32_t k)
{
	for (uint32_t i = 0; i < k; i++)
		a[i] = 1.0;
	for (uint32_t c = 0; c < k; c++) {
		uint32_t p = c;
		for (uint32_t r = c + 1; r < k; r++)
			if (fabs(g[r * k + c]) > fabs(g[p * k + c]))
				p = r;
		if (fabs(g[p * k + c]) < 1e-12)
			return -1;
		if (p != c) {
			for (uint32_t j = 0; j < k; j++) {
				double t = g[c * k + j];
				g[c * k + j] = g[p * k + j], g[p * k + j] = t;
			}
			double t = a[c];
			a[c] = a[p], a[p] = t;
		}
		for (uint32_t r = c + 1; r < k; r++) {
			double f = g[r * k + c] / g[c * k + c];
			for (uint32_t j = c; j < k; j++)
				g[r * k + j] -= f * g[c * k + j];
			a[r] -= f * a[c];
		}
	}
	for (uint32_t c = k; c-- > 0;) {
		for (uint32_t j = c + 1; j < k; j++)
			a[c] -= g[c * k + j] * a[j];
		a[c] /= g[c * k + c];
	}
	return 0;
}

/* Taps of the notch comb; 0 if over the limit. */
static uint32_t notch_taps(const struct gf_design *d, const double *f, double rate)
{
	if (d->taps)
		return d->taps;
	double bins = notch_half_width_bins(gf_design_kaiser_beta(d->attenuation_db));
	return notch_len(d->bandwidth_hz != 0.0 ? d->bandwidth_hz : f[0] / d->q, bins, rate);
}

/* Limits that keep a notch design to about a second and 256 MiB. */
#define NOTCH_MAX_STORE (32.0 * 1024 * 1024) /* k * (m + 1) doubles */
#define NOTCH_MAX_WORK 2e9		     /* k * k * (m + 1) multiply-adds */

static int notch_feasible(uint32_t k, uint32_t n)
{
	double m1 = (n - 1) / 2 + 1;
	return (double)k * m1 <= NOTCH_MAX_STORE && (double)k * k * m1 <= NOTCH_MAX_WORK;
}

/* One side (index = |offset|) of each windowed cosine; constant Q gives each its own length. */
static void notch_components(const struct gf_design *d, const double *f, uint32_t k, uint32_t n, double rate,
			     double *comp, double *w)
{
	uint32_t m = (n - 1) / 2;
	double beta = gf_design_kaiser_beta(d->attenuation_db);
	double bins = notch_half_width_bins(beta);
	for (uint32_t j = 0; j < k; j++) {
		uint32_t nk = n;
		if (!d->taps && d->q != 0.0) {
			nk = notch_len(f[j] / d->q, bins, rate);
			nk = nk > n || nk == 0 ? n : nk;
		}
		uint32_t mk = (nk - 1) / 2;
		kaiser_window(w, nk, beta);
		for (uint32_t i = 0; i <= mk; i++)
			comp[(size_t)j * (m + 1) + i] = w[mk + i] * cos(2.0 * M_PI * f[j] * i / rate);
	}
}

/*
 * Notch comb: h = delta - sum_k a_k c_k, where c_k is a Kaiser-windowed cosine
 * at notch k and the a_k are solved so that the gain is exactly zero at every
 * notch (g[r][j] = zero-phase gain of c_j at notch r).
 */
static int design_notch(const struct gf_design *d, double rate, double **out, uint32_t *nout,
			struct gf_errbuf *eb)
{
	double f[GF_DESIGN_MAX_NOTCHES];
	uint32_t k, n;
	int err = check_notch(d, rate, eb);
	if (err || (err = notch_freqs(d, rate, f, &k, eb)))
		return err;
	const char *key = d->taps ? "taps" : d->bandwidth_hz != 0.0 ? "bandwidth_hz" : "q";
	if ((n = notch_taps(d, f, rate)) == 0) {
		gf_errbuf_set(eb, "%s: the notch would need more than %u taps", key, GF_DESIGN_MAX_TAPS);
		return GF_E_CONFIG;
	}
	uint32_t m = (n - 1) / 2;
	if (!notch_feasible(k, n)) {
		gf_errbuf_set(
			eb, "harmonics: %u notches over %u taps is too much work; use fewer or wider notches",
			k, n);
		return GF_E_CONFIG;
	}
	double *comp = calloc((size_t)k * (m + 1), sizeof(double));
	double *g = malloc((size_t)k * k * sizeof(double));
	double *a = malloc(k * sizeof(double));
	double *w = malloc(n * sizeof(double)); /* window, then a cosine table */
	double *h = calloc(n, sizeof(double));
	if (!comp || !g || !a || !w || !h) {
		err = GF_E_NOMEM;
		goto fail;
	}
	notch_components(d, f, k, n, rate, comp, w);
	for (uint32_t r = 0; r < k; r++) {
		for (uint32_t i = 0; i <= m; i++)
			w[i] = 2.0 * cos(2.0 * M_PI * f[r] * i / rate);
		for (uint32_t j = 0; j < k; j++) {
			const double *c = comp + (size_t)j * (m + 1);
			double s = c[0];
			for (uint32_t i = 1; i <= m; i++)
				s += c[i] * w[i];
			g[r * k + j] = s;
		}
	}
	if (solve_ones(g, a, k)) {
		gf_errbuf_set(eb, "%s: the notches overlap too much to place; make them narrower", key);
		err = GF_E_CONFIG;
		goto fail;
	}
	h[m] = 1.0;
	for (uint32_t j = 0; j < k; j++) {
		const double *c = comp + (size_t)j * (m + 1);
		h[m] -= a[j] * c[0];
		for (uint32_t i = 1; i <= m; i++) {
			h[m + i] -= a[j] * c[i];
			h[m - i] -= a[j] * c[i];
		}
	}
	*out = h;
	*nout = n;
	h = NULL;
	err = 0;
fail:
	free(comp), free(g), free(a), free(w), free(h);
	return err;
}

static int design_delay(const struct gf_design *d, double rate, double **out, uint32_t *nout,
			struct gf_errbuf *eb)
{
	double s = d->type == GF_DESIGN_DELAY ? round(d->delay_ms * rate / 1000.0) : 0.0;
	if (!(s >= 0.0 && s < (double)GF_DESIGN_MAX_TAPS)) {
		gf_errbuf_set(eb, "delay_ms: must be 0..%g ms at %g Hz (got %g)",
			      (GF_DESIGN_MAX_TAPS - 1) * 1000.0 / rate, rate, d->delay_ms);
		return GF_E_CONFIG;
	}
	uint32_t n = (uint32_t)s + 1;
	double *h = calloc(n, sizeof(double));
	if (!h)
		return GF_E_NOMEM;
	h[n - 1] = 1.0;
	*out = h;
	*nout = n;
	return 0;
}

uint32_t gf_design_taps(const struct gf_design *d, double rate)
{
	double f[GF_DESIGN_MAX_NOTCHES];
	uint32_t k, n = 0;
	if (!(rate > 0.0) || !(d->attenuation_db >= 20.0 && d->attenuation_db <= 200.0) ||
	    d->taps > GF_DESIGN_MAX_TAPS)
		return 0;
	switch (d->type) {
	case GF_DESIGN_LOWPASS:
	case GF_DESIGN_HIGHPASS:
	case GF_DESIGN_BANDPASS:
	case GF_DESIGN_BANDSTOP:
		if (check_sinc_params(d, rate, NULL) || sinc_taps(d, rate, &n, NULL))
			return 0;
		return n;
	case GF_DESIGN_NOTCH:
		if (check_notch(d, rate, NULL) || notch_freqs(d, rate, f, &k, NULL))
			return 0;
		n = notch_taps(d, f, rate);
		return notch_feasible(k, n) ? n : 0;
	case GF_DESIGN_IDENTITY:
	case GF_DESIGN_SUPPRESS:
	case GF_DESIGN_DEEPFILTER:
		return 1;
	case GF_DESIGN_DELAY: {
		double s = round(d->delay_ms * rate / 1000.0);
		return s >= 0.0 && s < (double)GF_DESIGN_MAX_TAPS ? (uint32_t)s + 1 : 0;
	}
	case GF_DESIGN_DENOISE:
		return d->taps ? d->taps : GF_DENOISE_DEFAULT_TAPS;
	case GF_DESIGN_PEQ: /* the first length tried: the check may double it */
		return d->peq ? gf_peq_taps_estimate(d->peq, rate, d->taps) : 0;
	}
	return 0;
}

int gf_design_run(const struct gf_design *d, double rate, double **taps, uint32_t *n, struct gf_errbuf *eb)
{
	*taps = NULL;
	*n = 0;
	if (!(rate > 0.0))
		return GF_E_INVAL;
	if (!(d->attenuation_db >= 20.0 && d->attenuation_db <= 200.0)) {
		gf_errbuf_set(eb, "attenuation_db: must be 20..200 dB (got %g)", d->attenuation_db);
		return GF_E_CONFIG;
	}
	if (d->taps > GF_DESIGN_MAX_TAPS) {
		gf_errbuf_set(eb, "taps: must be 1..%u (got %u)", GF_DESIGN_MAX_TAPS, d->taps);
		return GF_E_CONFIG;
	}
	switch (d->type) {
	case GF_DESIGN_LOWPASS:
	case GF_DESIGN_HIGHPASS:
	case GF_DESIGN_BANDPASS:
	case GF_DESIGN_BANDSTOP:
		return design_sinc(d, rate, taps, n, eb);
	case GF_DESIGN_NOTCH:
		return design_notch(d, rate, taps, n, eb);
	case GF_DESIGN_IDENTITY:
	case GF_DESIGN_DELAY:
	case GF_DESIGN_SUPPRESS: /* its work is done after the chain's FIR: here it passes */
	case GF_DESIGN_DEEPFILTER:
		return design_delay(d, rate, taps, n, eb);
	case GF_DESIGN_DENOISE: /* needs its noise file: gf_denoise_design */
		gf_errbuf_set(eb, "noise: a denoise design is made from its noise file (gf_denoise_design)");
		return GF_E_INVAL;
	case GF_DESIGN_PEQ: {
		struct gf_peq_report rep;
		return d->peq ? gf_peq_design(d->peq, rate, d->taps, taps, n, &rep, eb) : GF_E_INVAL;
	}
	}
	return GF_E_INVAL;
}
