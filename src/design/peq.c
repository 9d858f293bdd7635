/*
 * Parametric EQ bands (RBJ Audio EQ Cookbook biquads) made into one
 * linear-phase FIR with the cascade's exact magnitude.
 *
 * A magnitude with a zero on the unit circle (a notch; the stopband zeros of
 * low-, high- and band-pass) has a kink there, and a windowed FIR converges on
 * a kink only slowly: a notch would need millions of taps to be deep. Those
 * zeros are exact three-tap factors ([1 -2cos w0 1], [1 2 1], [1 -2 1],
 * [1 0 -1]), so they are taken out and convolved back at the end; what is
 * left is smooth and above zero, and its zero-phase impulse response decays
 * like the slowest pole or off-circle zero, r^|n|. The length starts from that
 * decay, and is verified and doubled until the error bound holds.
 */
#include "peq.h"

#include <complex.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fftw_plan.h"
#include "fir_fft.h"

static const char *const type_names[] = {
	[GF_PEQ_PEAKING] = "peaking", [GF_PEQ_LOWSHELF] = "lowshelf", [GF_PEQ_HIGHSHELF] = "highshelf",
	[GF_PEQ_LOWPASS] = "lowpass", [GF_PEQ_HIGHPASS] = "highpass", [GF_PEQ_BANDPASS] = "bandpass",
	[GF_PEQ_NOTCH] = "notch",     [GF_PEQ_ALLPASS] = "allpass",
};
#define N_TYPES (sizeof(type_names) / sizeof(type_names[0]))

int gf_peq_parse_type(const char *s, enum gf_peq_type *out)
{
	for (size_t i = 0; i < N_TYPES; i++) {
		if (strcmp(s, type_names[i]) == 0) {
			*out = (enum gf_peq_type)i;
			return 0;
		}
	}
	return GF_E_INVAL;
}

const char *gf_peq_type_name(enum gf_peq_type t)
{
	return (unsigned)t < N_TYPES ? type_names[t] : "unknown";
}

static int has_gain(enum gf_peq_type t)
{
	return t == GF_PEQ_PEAKING || t == GF_PEQ_LOWSHELF || t == GF_PEQ_HIGHSHELF;
}

static int is_shelf(enum gf_peq_type t)
{
	return t == GF_PEQ_LOWSHELF || t == GF_PEQ_HIGHSHELF;
}

/* The zeros of these bands lie on the unit circle: an exact FIR factor. */
static int has_circle_zeros(enum gf_peq_type t)
{
	return t == GF_PEQ_LOWPASS || t == GF_PEQ_HIGHPASS || t == GF_PEQ_BANDPASS || t == GF_PEQ_NOTCH;
}

static int fail(struct gf_errbuf *eb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct gf_errbuf *eb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gf_errbuf_vset(eb, fmt, ap);
	va_end(ap);
	return GF_E_CONFIG;
}

/* Which of q, bandwidth_oct, slope a band takes, and which it needs. */
static int check_width(struct gf_peq_band *b, struct gf_errbuf *eb)
{
	const char *tn = gf_peq_type_name(b->type);
	int given = (b->q != 0.0) + (b->bw_oct != 0.0) + (b->slope != 0.0);
	if (given > 1)
		return fail(eb, "q: a %s band takes one of q, bandwidth_oct, slope", tn);
	if (b->slope != 0.0 && !is_shelf(b->type))
		return fail(eb, "slope: only a shelf has a slope, not a %s band", tn);
	if (b->bw_oct != 0.0 &&
	    (is_shelf(b->type) || b->type == GF_PEQ_LOWPASS || b->type == GF_PEQ_HIGHPASS))
		return fail(eb, "bandwidth_oct: a %s band takes q, not a bandwidth", tn);
	if (b->q != 0.0 && !(b->q > 0.0 && b->q <= GF_PEQ_Q_MAX))
		return fail(eb, "q: must be above 0 and at most 100 for a %s band (got %g)", tn, b->q);
	if (b->bw_oct != 0.0 && !(b->bw_oct > 0.0 && b->bw_oct <= GF_PEQ_BW_OCT_MAX))
		return fail(eb,
			    "bandwidth_oct: must be above 0 and at most 10 octaves for a %s band (got %g)",
			    tn, b->bw_oct);
	if (b->slope != 0.0 && !(b->slope > 0.0 && b->slope <= 1.0))
		return fail(eb, "slope: must be above 0 and at most 1 for a %s band (got %g)", tn, b->slope);
	if (given == 0 && (is_shelf(b->type) || b->type == GF_PEQ_LOWPASS || b->type == GF_PEQ_HIGHPASS))
		b->q = GF_PEQ_DEFAULT_Q;
	else if (given == 0)
		return fail(eb, "q: a %s band needs q (or bandwidth_oct)", tn);
	return 0;
}

int gf_peq_band_finish(struct gf_peq_band *b, struct gf_errbuf *eb)
{
	const char *tn = gf_peq_type_name(b->type);
	if ((unsigned)b->type >= N_TYPES) {
		gf_errbuf_set(eb, "type: unknown band type %d", (int)b->type);
		return GF_E_CONFIG;
	}
	if (!(b->freq_hz > 0.0 && b->freq_hz <= 1e6))
		return fail(eb, "freq_hz: a %s band needs a frequency above 0 Hz (got %g)", tn, b->freq_hz);
	if (has_gain(b->type) && !b->has_gain)
		return fail(eb, "gain_db: a %s band needs a gain in dB", tn);
	if (!has_gain(b->type) && b->has_gain)
		return fail(eb, "gain_db: a %s band has no gain (use preamp_db or the filter's gain_db)", tn);
	if (!(b->gain_db >= GF_PEQ_GAIN_DB_MIN && b->gain_db <= GF_PEQ_GAIN_DB_MAX))
		return fail(eb, "gain_db: a %s band's gain must be -60..30 dB (got %g)", tn, b->gain_db);
	return check_width(b, eb);
}

int gf_peq_add(struct gf_peq *p, const struct gf_peq_band *b, struct gf_errbuf *eb)
{
	if (p->n >= GF_PEQ_MAX_BANDS) {
		gf_errbuf_set(eb, "bands: more than %d bands", GF_PEQ_MAX_BANDS);
		return GF_E_CONFIG;
	}
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 16;
		struct gf_peq_band *nb = realloc(p->bands, cap * sizeof(*nb));
		if (!nb)
			return GF_E_NOMEM;
		p->bands = nb, p->cap = cap;
	}
	p->bands[p->n++] = *b;
	return 0;
}

void gf_peq_free(struct gf_peq *p)
{
	if (!p)
		return;
	free(p->bands);
	memset(p, 0, sizeof(*p));
}

static double band_alpha(const struct gf_peq_band *b, double w0, double a)
{
	double s = sin(w0);
	if (b->bw_oct != 0.0) /* the cookbook's digital bandwidth */
		return s * sinh(M_LN2 / 2.0 * b->bw_oct * w0 / s);
	if (b->slope != 0.0)
		return s / 2.0 * sqrt((a + 1.0 / a) * (1.0 / b->slope - 1.0) + 2.0);
	return s / (2.0 * b->q);
}

static void shelf(const struct gf_peq_band *b, double a, double c, double al, double *n, double *d)
{
	double k = 2.0 * sqrt(a) * al, sgn = b->type == GF_PEQ_LOWSHELF ? 1.0 : -1.0;
	n[0] = a * ((a + 1.0) - sgn * (a - 1.0) * c + k);
	n[1] = sgn * 2.0 * a * ((a - 1.0) - sgn * (a + 1.0) * c);
	n[2] = a * ((a + 1.0) - sgn * (a - 1.0) * c - k);
	d[0] = (a + 1.0) + sgn * (a - 1.0) * c + k;
	d[1] = -sgn * 2.0 * ((a - 1.0) + sgn * (a + 1.0) * c);
	d[2] = (a + 1.0) + sgn * (a - 1.0) * c - k;
}

int gf_peq_biquad(const struct gf_peq_band *b, double rate, struct gf_biquad *out, struct gf_errbuf *eb)
{
	if (!(b->freq_hz < rate / 2.0)) {
		gf_errbuf_set(eb, "freq_hz: %g Hz is not below half the sample rate (%g Hz at %g Hz)",
			      b->freq_hz, rate / 2.0, rate);
		return GF_E_CONFIG;
	}
	double w0 = 2.0 * M_PI * b->freq_hz / rate, c = cos(w0);
	double a = pow(10.0, b->gain_db / 40.0), al = band_alpha(b, w0, a);
	double n[3] = {1.0, 0.0, 0.0}, d[3] = {1.0 + al, -2.0 * c, 1.0 - al};
	switch (b->type) {
	case GF_PEQ_PEAKING:
		n[0] = 1.0 + al * a, n[1] = -2.0 * c, n[2] = 1.0 - al * a;
		d[0] = 1.0 + al / a, d[2] = 1.0 - al / a;
		break;
	case GF_PEQ_LOWSHELF:
	case GF_PEQ_HIGHSHELF:
		shelf(b, a, c, al, n, d);
		break;
	case GF_PEQ_LOWPASS:
		n[0] = n[2] = (1.0 - c) / 2.0, n[1] = 1.0 - c;
		break;
	case GF_PEQ_HIGHPASS:
		n[0] = n[2] = (1.0 + c) / 2.0, n[1] = -(1.0 + c);
		break;
	case GF_PEQ_BANDPASS:
		n[0] = al, n[1] = 0.0, n[2] = -al;
		break;
	case GF_PEQ_NOTCH:
		n[0] = 1.0, n[1] = -2.0 * c, n[2] = 1.0;
		break;
	case GF_PEQ_ALLPASS:
		n[0] = 1.0 - al, n[1] = -2.0 * c, n[2] = 1.0 + al;
		break;
	}
	if (!(al > 0.0) || !isfinite(al) || !(d[0] != 0.0)) {
		gf_errbuf_set(eb, "q: the %s band at %g Hz has no valid bandwidth at %g Hz",
			      gf_peq_type_name(b->type), b->freq_hz, rate);
		return GF_E_CONFIG;
	}
	*out = (struct gf_biquad){n[0] / d[0], n[1] / d[0], n[2] / d[0], d[1] / d[0], d[2] / d[0]};
	return 0;
}

/* |c0 + c1 e^-jw + c2 e^-2jw| from cos w and cos 2w. */
static double quad_mag(double c0, double c1, double c2, double cw, double c2w)
{
	double m2 = c0 * c0 + c1 * c1 + c2 * c2 + 2.0 * c1 * (c0 + c2) * cw + 2.0 * c0 * c2 * c2w;
	return sqrt(fmax(m2, 0.0));
}

/* The band's magnitude without its unit-circle zeros (all of it for the other types). */
static double smooth_mag(const struct gf_peq_band *b, const struct gf_biquad *q, double cw, double c2w)
{
	if (b->type == GF_PEQ_ALLPASS)
		return 1.0;
	double den = quad_mag(1.0, q->a1, q->a2, cw, c2w);
	if (has_circle_zeros(b->type))
		return fabs(q->b0) / den;
	return quad_mag(q->b0, q->b1, q->b2, cw, c2w) / den;
}

/* The three-tap factor holding a band's unit-circle zeros (divided by b0). */
static void circle_factor(const struct gf_peq_band *b, const struct gf_biquad *q, double f[3])
{
	f[0] = 1.0, f[2] = b->type == GF_PEQ_BANDPASS ? -1.0 : 1.0;
	f[1] = q->b1 / q->b0;
}

double gf_peq_response(const struct gf_peq *p, double freq_hz, double rate)
{
	double w = 2.0 * M_PI * freq_hz / rate, cw = cos(w), c2w = cos(2.0 * w);
	double g = pow(10.0, p->preamp_db / 20.0);
	for (uint32_t i = 0; i < p->n; i++) {
		struct gf_biquad q;
		if (gf_peq_biquad(&p->bands[i], rate, &q, NULL))
			return NAN;
		g *= p->bands[i].type == GF_PEQ_ALLPASS
			     ? 1.0
			     : quad_mag(q.b0, q.b1, q.b2, cw, c2w) / quad_mag(1.0, q.a1, q.a2, cw, c2w);
	}
	return g;
}

/* Largest root radius of z^2 + c1 z + c2, folded inside the circle (r or 1/r). */
static double root_decay(double c1, double c2)
{
	double disc = c1 * c1 - 4.0 * c2, r;
	if (disc < 0.0)
		r = sqrt(c2);
	else
		r = fmax(fabs(-c1 + sqrt(disc)), fabs(-c1 - sqrt(disc))) / 2.0;
	return r > 1.0 ? 1.0 / r : r;
}

/* How fast the smooth part's impulse response decays: the slowest band (*slow), r per sample. */
static double decay(const struct gf_biquad *q, const struct gf_peq *p, int *slow)
{
	double rho = 0.0;
	*slow = -1;
	for (uint32_t i = 0; i < p->n; i++) {
		const struct gf_peq_band *b = &p->bands[i];
		if (b->type == GF_PEQ_ALLPASS)
			continue;
		double r = root_decay(q[i].a1, q[i].a2);
		if (!has_circle_zeros(b->type) && q[i].b0 != 0.0)
			r = fmax(r, root_decay(q[i].b1 / q[i].b0, q[i].b2 / q[i].b0));
		if (r > rho)
			rho = r, *slow = (int)i;
	}
	return rho;
}

/* e^-8 of the decay on each side (measured: within 0.012 dB over the tested bands); the check decides. */
#define DECAY_SPANS 8.0
#define MIN_SMOOTH_TAPS 15u

static uint32_t smooth_estimate(double rho)
{
	if (!(rho > 0.0))
		return 1;
	if (!(rho < 1.0)) /* a pole on the circle in double precision (f0 of a few nHz) */
		return GF_PEQ_MAX_TAPS + 2;
	double half = ceil(DECAY_SPANS / -log(rho));
	if (!(half < GF_PEQ_MAX_TAPS))
		return GF_PEQ_MAX_TAPS + 2;
	uint32_t n = 2u * (uint32_t)half + 1u;
	return n < MIN_SMOOTH_TAPS ? MIN_SMOOTH_TAPS : n;
}

static uint32_t n_circle(const struct gf_peq *p)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < p->n; i++)
		k += has_circle_zeros(p->bands[i].type);
	return k;
}

/* All biquads at @p rate; rep->band names the one at fault. */
static int all_biquads(const struct gf_peq *p, double rate, struct gf_biquad *q, struct gf_peq_report *rep,
		       struct gf_errbuf *eb)
{
	for (uint32_t i = 0; i < p->n; i++) {
		int r = gf_peq_biquad(&p->bands[i], rate, &q[i], eb);
		if (r) {
			rep->band = (int)i;
			return r;
		}
	}
	return 0;
}

uint32_t gf_peq_taps_estimate(const struct gf_peq *p, double rate, uint32_t taps)
{
	if (taps)
		return taps;
	struct gf_biquad *q = calloc(p->n ? p->n : 1, sizeof(*q));
	struct gf_peq_report rep;
	int slow;
	uint32_t n = 0;
	if (q && !all_biquads(p, rate, q, &rep, NULL))
		n = smooth_estimate(decay(q, p, &slow)) + 2u * n_circle(p);
	free(q);
	return n;
}

/* The smooth part (preamp included) at w = 2 pi k / m, k = 0..m/2. */
static void sample_smooth(const struct gf_peq *p, const struct gf_biquad *q, size_t m, double *s)
{
	double g = pow(10.0, p->preamp_db / 20.0);
	for (size_t k = 0; k <= m / 2; k++) {
		double w = 2.0 * M_PI * (double)k / (double)m, cw = cos(w), c2w = cos(2.0 * w), v = g;
		for (uint32_t i = 0; i < p->n; i++)
			v *= smooth_mag(&p->bands[i], &q[i], cw, c2w);
		s[k] = v;
	}
}

/* Tukey window: flat over the inner three quarters, tapered where the response has decayed. */
static double taper(long d, long half)
{
	long flat = half - half / 4;
	if (labs(d) <= flat)
		return 1.0;
	return 0.5 * (1.0 + cos(M_PI * (double)(labs(d) - flat) / (double)(half - flat + 1)));
}

/*
 * @p len (odd) zero-phase taps of the smooth part @p s, given on the check
 * grid of 2m points (m + 1 of them): sampled on m points, inverse-transformed,
 * windowed; then transformed on the 2m grid and compared: *err_db.
 */
static int smooth_fir(const double *s, size_t m, uint32_t len, double *out, double *err_db,
		      struct gf_errbuf *eb)
{
	size_t m2 = 2 * m, bins2 = m + 1;
	int r = gf_fft_room(m2, m2 * sizeof(double) + bins2 * sizeof(fftw_complex), "the peq design", eb);
	if (r)
		return r;
	double *x = fftw_malloc(m2 * sizeof(double));
	fftw_complex *spec = fftw_malloc(bins2 * sizeof(fftw_complex));
	fftw_plan inv = x && spec ? gf_fftw_plan_c2r((int)m, spec, x) : NULL;
	fftw_plan fwd = inv ? gf_fftw_plan_r2c((int)m2, x, spec) : NULL;
	if (!fwd) {
		r = gf_fft_nomem(m2, "the peq design", eb);
		goto out;
	}
	for (size_t k = 0; k <= m / 2; k++)
		spec[k] = s[2 * k];
	fftw_execute(inv);
	long half = (long)(len - 1) / 2;
	for (long i = 0; i < (long)len; i++) {
		long d = i - half;
		out[i] = x[d < 0 ? (long)m + d : d] / (double)m * taper(d, half);
	}
	memset(x, 0, m2 * sizeof(double));
	for (long i = 0; i < (long)len; i++) {
		long d = i - half;
		x[d < 0 ? (long)m2 + d : d] = out[i];
	}
	fftw_execute(fwd);
	*err_db = 0.0;
	for (size_t k = 0; k < bins2; k++)
		*err_db = fmax(*err_db, fabs(20.0 * log10(cabs(spec[k]) / s[k])));
	if (!isfinite(*err_db))
		*err_db = INFINITY;
out:
	gf_fftw_destroy(inv);
	gf_fftw_destroy(fwd);
	fftw_free(x);
	fftw_free(spec);
	return r;
}

/* Convolve the bands' unit-circle factors into @p o (len taps, room for 2 per factor). */
static void add_circle_zeros(const struct gf_peq *p, const struct gf_biquad *q, double *o, uint32_t len)
{
	for (uint32_t b = 0; b < p->n; b++) {
		if (!has_circle_zeros(p->bands[b].type))
			continue;
		double f[3];
		circle_factor(&p->bands[b], &q[b], f);
		for (uint32_t i = len + 2; i-- > 0;)
			o[i] = f[0] * o[i] + (i >= 1 ? f[1] * o[i - 1] : 0.0) +
			       (i >= 2 ? f[2] * o[i - 2] : 0.0);
		len += 2;
	}
}

/* The advice for a band that needs too many taps: move its frequency away from the edge it is near. */
static const char *advice(const struct gf_peq *p, int band, double rate)
{
	if (band >= 0 && p->bands[band].freq_hz > rate / 4.0)
		return "lower this band's frequency (it is close to half the sample rate) or its q";
	return "raise this band's frequency or lower its q";
}

/* Largest over smallest of the sampled smooth part (infinite where it reaches zero). */
static double spread(const double *s, size_t n)
{
	double lo = INFINITY, hi = 0.0;
	for (size_t k = 0; k < n; k++)
		lo = fmin(lo, s[k]), hi = fmax(hi, s[k]);
	return lo > 0.0 ? hi / lo : INFINITY;
}

/* A smooth part spanning more than this is beyond what double-precision FFTs resolve to the bound
 * (measured: 2.7e12 held 0.007 dB, 1.7e14 never better than 0.28 dB at any length). */
#define MAX_SPREAD 1e13
/* design_smooth's answer when the bands are better designed apart (design_split). */
#define SPLIT 1

/* The smooth part's length: given (taps less the factors), or grown until it is within @p max_err dB.
 * With @p may_split, a spread too wide or a length over the limit answers SPLIT instead of an error. */
static int design_smooth(const struct gf_peq *p, const struct gf_biquad *q, double rate, uint32_t taps,
			 double max_err, int may_split, double **sm, uint32_t *len, struct gf_peq_report *rep,
			 struct gf_errbuf *eb)
{
	uint32_t k2 = 2u * n_circle(p);
	int slow;
	uint32_t n = taps ? taps - k2 : smooth_estimate(decay(q, p, &slow));
	for (;;) {
		if (n > GF_PEQ_MAX_TAPS - k2) {
			if (may_split)
				return SPLIT;
			rep->band = slow;
			gf_errbuf_set(eb,
				      "bands: staying within %g dB of the response would need more than %u "
				      "taps; %s",
				      GF_PEQ_MAX_ERR_DB, GF_PEQ_MAX_TAPS, advice(p, slow, rate));
			return GF_E_CONFIG;
		}
		size_t m = 4096;
		while (m < 4 * (size_t)n)
			m <<= 1;
		double *s = malloc((m + 1) * sizeof(double));
		*sm = malloc(n * sizeof(double));
		if (!s || !*sm) {
			free(s), free(*sm), *sm = NULL;
			return GF_E_NOMEM;
		}
		sample_smooth(p, q, 2 * m, s);
		int r = may_split && spread(s, m + 1) > MAX_SPREAD
				? SPLIT
				: smooth_fir(s, m, n, *sm, &rep->max_err_db, eb);
		free(s);
		if (r == SPLIT)
			free(*sm), *sm = NULL;
		if (r || taps || rep->max_err_db <= max_err) {
			*len = n;
			return r;
		}
		free(*sm), *sm = NULL;
		n = 2 * n + 1;
	}
}

/* One FIR for the bands of @p p: the smooth part, its unit-circle factors convolved back. */
static int design_group(const struct gf_peq *p, const struct gf_biquad *q, double rate, uint32_t taps,
			double max_err, int may_split, double **h, uint32_t *n, struct gf_peq_report *rep,
			struct gf_errbuf *eb)
{
	uint32_t k2 = 2u * n_circle(p), len = 0;
	double *sm = NULL, *o = NULL;
	int r = design_smooth(p, q, rate, taps, max_err, may_split, &sm, &len, rep, eb);
	if (!r && !(o = calloc(len + k2, sizeof(double))))
		r = GF_E_NOMEM;
	if (!r) {
		memcpy(o, sm, len * sizeof(double));
		add_circle_zeros(p, q, o, len);
		*h = o, *n = len + k2;
	}
	free(sm);
	return r;
}

/* The bands of design_split: each band with unit-circle zeros on its own, the others together. */
struct split {
	uint32_t ng;	       /* groups */
	struct gf_peq_band *b; /* bands, grouped: group g is [at[g], at[g + 1]) */
	struct gf_biquad *q;   /* their biquads, in the same order */
	uint32_t *from, *at;   /* the index in the whole peq of each; where each group starts */
};

static int split_new(const struct gf_peq *p, const struct gf_biquad *q, struct split *sp)
{
	uint32_t nc = n_circle(p), k = 0;
	sp->ng = nc + (nc < p->n);
	sp->b = malloc(p->n * sizeof(*sp->b));
	sp->q = malloc(p->n * sizeof(*sp->q));
	sp->from = malloc(p->n * sizeof(*sp->from));
	sp->at = malloc((sp->ng + 1) * sizeof(*sp->at));
	if (!sp->b || !sp->q || !sp->from || !sp->at)
		return GF_E_NOMEM;
	for (int circle = 1; circle >= 0; circle--)
		for (uint32_t i = 0; i < p->n; i++)
			if (has_circle_zeros(p->bands[i].type) == circle)
				sp->b[k] = p->bands[i], sp->q[k] = q[i], sp->from[k++] = i;
	for (uint32_t g = 0; g < nc; g++)
		sp->at[g] = g;
	sp->at[nc] = nc, sp->at[sp->ng] = p->n;
	return 0;
}

static void split_free(struct split *sp)
{
	free(sp->b), free(sp->q), free(sp->from), free(sp->at);
}

/* @p acc (*n taps) convolved with @p g (gn taps), in place of @p acc; both freed on failure. */
static int convolve_into(double **acc, uint32_t *n, double *g, uint32_t gn, struct gf_errbuf *eb)
{
	int r = GF_E_NOMEM;
	double *y = NULL;
	if (*n + gn - 1u > GF_PEQ_MAX_TAPS) {
		gf_errbuf_set(eb,
			      "bands: designed one at a time (their combined response spans too wide a range "
			      "to design at once), these bands would need more than %u taps; space them "
			      "further apart or lower their q",
			      GF_PEQ_MAX_TAPS);
		r = GF_E_CONFIG;
	} else if ((y = malloc((*n + gn - 1u) * sizeof(double)))) {
		r = gf_fir_convolve_fft(*acc, *n, g, gn, y, eb);
	}
	free(*acc), free(g);
	*acc = r ? (free(y), NULL) : y;
	*n = r ? 0 : *n + gn - 1u;
	return r;
}

/*
 * Close notches (or pass bands) leave a smooth part whose peaks, where the divided-out zeros
 * were, multiply into a range no double-precision FFT resolves. Each such band is then
 * designed on its own, within its share of the bound, and the FIRs convolved: the errors in dB
 * of a product add, so the whole stays within the bound. Each length follows its own band's
 * decay, not the compounded peaks.
 */
static int design_split(const struct gf_peq *p, const struct gf_biquad *q, double rate, double **h,
			uint32_t *n, struct gf_peq_report *rep, struct gf_errbuf *eb)
{
	struct split sp;
	int r = split_new(p, q, &sp);
	double *acc = NULL, err = 0.0;
	uint32_t acc_n = 0;
	for (uint32_t g = 0; !r && g < sp.ng; g++) {
		struct gf_peq sub = {.bands = sp.b + sp.at[g], .n = sp.at[g + 1] - sp.at[g]};
		sub.preamp_db = g == 0 ? p->preamp_db : 0.0;
		double *gh = NULL;
		uint32_t gn = 0;
		r = design_group(&sub, sp.q + sp.at[g], rate, 0, GF_PEQ_MAX_ERR_DB / sp.ng, 0, &gh, &gn, rep,
				 eb);
		if (r) {
			if (rep->band >= 0)
				rep->band = (int)sp.from[sp.at[g] + (uint32_t)rep->band];
			break;
		}
		err += rep->max_err_db;
		if (!acc)
			acc = gh, acc_n = gn;
		else
			r = convolve_into(&acc, &acc_n, gh, gn, eb);
	}
	split_free(&sp);
	if (r) {
		free(acc);
		return r;
	}
	rep->max_err_db = err;
	*h = acc, *n = acc_n;
	return 0;
}

int gf_peq_design(const struct gf_peq *p, double rate, uint32_t taps, double **h, uint32_t *n,
		  struct gf_peq_report *rep, struct gf_errbuf *eb)
{
	*h = NULL, *n = 0;
	rep->taps = 0, rep->max_err_db = 0.0, rep->band = -1;
	uint32_t k2 = 2u * n_circle(p);
	if (taps && (!(taps & 1u) || taps < k2 + 1u || taps > GF_PEQ_MAX_TAPS)) {
		gf_errbuf_set(eb, "taps: must be odd, at least %u for these bands and at most %u (got %u)",
			      k2 + 1u, GF_PEQ_MAX_TAPS, taps);
		return GF_E_CONFIG;
	}
	struct gf_biquad *q = calloc(p->n ? p->n : 1, sizeof(*q));
	int r = q ? all_biquads(p, rate, q, rep, eb) : GF_E_NOMEM;
	/* More than one group to split into: a circle band and anything else. */
	int may_split = !taps && k2 && (k2 > 2u || n_circle(p) < p->n);
	if (!r)
		r = design_group(p, q, rate, taps, GF_PEQ_MAX_ERR_DB, may_split, h, n, rep, eb);
	if (r == SPLIT)
		r = design_split(p, q, rate, h, n, rep, eb);
	if (!r)
		rep->taps = *n;
	free(q);
	return r;
}
