/*
 * Mains hum detection: one long FFT, a harmonic sum per mains family,
 * parabolic peak refinement, and a local noise floor per harmonic.
 */
#include "hum.h"
#include "safe_file.h"

#include <fftw3.h>
#include <math.h>
#include <sndfile.h>
#include <stdlib.h>
#include <string.h>

#include "fftw_plan.h"

struct spectrum {
	double *p; /* |X|^2 on bins 0..m/2 */
	size_t m;
	double df; /* Hz per bin */
};

/* The file's channels mixed, at most GF_HUM_MAX_SECONDS, into *x (malloc'ed, fftw). */
static int read_mono(const char *path, double rate, double **x, size_t *n, struct gf_errbuf *eb)
{
	SF_INFO info;
	memset(&info, 0, sizeof(info));
	struct gf_errbuf why;
	int fd = gf_file_open_read(path, "input file", 0, &why); /* a pipe would be consumed: refused */
	if (fd < 0) {
		gf_errbuf_set(eb, "freq_hz: \"auto\" needs a regular input file: %s", why.msg);
		return GF_E_CONFIG;
	}
	SNDFILE *f = sf_open_fd(fd, SFM_READ, &info, SF_TRUE); /* closes fd, even on failure */
	if (!f) {
		gf_errbuf_set(eb, "freq_hz: \"auto\" cannot read %s: %s", path, sf_strerror(NULL));
		return GF_E_CONFIG;
	}
	if ((double)info.samplerate != rate) {
		gf_errbuf_set(eb, "freq_hz: \"auto\": %s is at %d Hz, the filter at %g Hz", path,
			      info.samplerate, rate);
		sf_close(f);
		return GF_E_CONFIG;
	}
	size_t cap = (size_t)(GF_HUM_MAX_SECONDS * rate), ch = (size_t)info.channels, got = 0;
	cap = cap < GF_HUM_MAX_SAMPLES ? cap : GF_HUM_MAX_SAMPLES;
	float *buf = malloc(4096 * ch * sizeof(float));
	*x = fftw_malloc(cap * sizeof(double));
	int r = 0;
	if (!buf || !*x) {
		gf_errbuf_set(eb, "freq_hz: \"auto\": out of memory for %zu samples of %s", cap, path);
		r = GF_E_NOMEM;
	}
	while (!r && got < cap) {
		sf_count_t k = sf_readf_float(f, buf, (sf_count_t)(cap - got < 4096 ? cap - got : 4096));
		if (k <= 0)
			break;
		for (sf_count_t i = 0; i < k; i++) {
			double s = 0.0;
			for (size_t c = 0; c < ch; c++)
				s += buf[(size_t)i * ch + c];
			(*x)[got++] = s / (double)ch;
		}
	}
	free(buf);
	sf_close(f);
	*n = got;
	return r;
}

static int make_spectrum(const double *x, size_t n, double rate, struct spectrum *s, struct gf_errbuf *eb)
{
	size_t m = 1;
	while (m < 2 * n)
		m <<= 1;
	const char *what = "freq_hz: \"auto\": the input's spectrum";
	int r = gf_fft_room(m, m * sizeof(double) + (m / 2 + 1) * (sizeof(fftw_complex) + sizeof(double)),
			    what, eb);
	if (r)
		return r;
	double *t = fftw_malloc(m * sizeof(double));
	fftw_complex *X = fftw_malloc((m / 2 + 1) * sizeof(fftw_complex));
	s->p = malloc((m / 2 + 1) * sizeof(double));
	fftw_plan plan = t && X ? gf_fftw_plan_r2c((int)m, t, X) : NULL;
	r = plan && s->p ? 0 : gf_fft_nomem(m, what, eb);
	if (!r) {
		for (size_t i = 0; i < m; i++)
			t[i] = i < n ? x[i] * (0.5 - 0.5 * cos(2.0 * M_PI * (double)i / (double)n)) : 0.0;
		fftw_execute(plan);
		for (size_t k = 0; k <= m / 2; k++)
			s->p[k] = X[k][0] * X[k][0] + X[k][1] * X[k][1];
		s->m = m;
		s->df = rate / (double)m;
	}
	if (plan)
		gf_fftw_destroy(plan);
	fftw_free(t);
	fftw_free(X);
	return r;
}

/* The largest bin within +-w bins of frequency f. */
static size_t peak_bin(const struct spectrum *s, double f, size_t w)
{
	size_t c = (size_t)llround(f / s->df), best = c;
	for (size_t k = c > w ? c - w : 0; k <= c + w && k <= s->m / 2; k++)
		if (s->p[k] > s->p[best])
			best = k;
	return best;
}

/*
 * Mean power within +-5 Hz of f, leaving out +-1 Hz around it. The mean, not
 * the median: a noise bin's power is exponentially distributed, so a peak
 * GF_HUM_MIN_SNR_DB (12 dB) above the mean arises from noise alone with odds
 * of e^-15.8 per bin, while above the median (0.69 x the mean) it would be
 * 1 in 50000 and, over a few hundred bins searched, a false hum now and then.
 */
static double local_floor(const struct spectrum *s, double f)
{
	size_t n = 0;
	double sum = 0.0;
	for (double g = f - 5.0; g <= f + 5.0; g += s->df) {
		if (fabs(g - f) < 1.0 || g <= 0.0)
			continue;
		size_t k = (size_t)llround(g / s->df);
		if (k <= s->m / 2)
			sum += s->p[k], n++;
	}
	return n ? sum / (double)n : 0.0;
}

/* Harmonic sum over fundamentals near @p base: the best fundamental and its score. */
static double best_fundamental(const struct spectrum *s, double base, uint32_t hmax, double rate,
			       double *score)
{
	double best = base;
	*score = -1.0;
	for (double f0 = base - 0.5; f0 <= base + 0.5 + 1e-9; f0 += 0.002) {
		double sum = 0.0;
		for (uint32_t h = 1; h <= hmax && h * f0 < 0.45 * rate; h++)
			sum += s->p[peak_bin(s, h * f0, 1)];
		if (sum > *score)
			*score = sum, best = f0;
	}
	return best;
}

/* Which harmonics of f0 stand above the noise, and the fundamental fitted to their refined peaks. */
static void harmonics_above(const struct spectrum *s, double f0, uint32_t hmax, double rate, struct gf_hum *h)
{
	double num = 0.0, den = 0.0;
	h->n = 0;
	for (uint32_t k = 1; k <= hmax && k <= GF_HUM_MAX_HARMONICS && k * f0 < 0.45 * rate; k++) {
		/* f0 is within the 0.002 Hz grid's half step: harmonic k within k x 0.001 Hz, plus the main
		 * lobe */
		size_t b = peak_bin(s, k * f0, (size_t)ceil(0.001 * k / s->df) + 2);
		double fl = local_floor(s, k * f0), snr = fl > 0.0 ? 10.0 * log10(s->p[b] / fl) : 0.0;
		if (!(snr >= GF_HUM_MIN_SNR_DB) || b == 0)
			continue;
		/* parabolic interpolation of log power around the peak bin */
		double a = log(s->p[b - 1] + 1e-300), c = log(s->p[b] + 1e-300),
		       d = log(s->p[b + 1] + 1e-300);
		double off = (a - 2.0 * c + d) != 0.0 ? 0.5 * (a - d) / (a - 2.0 * c + d) : 0.0;
		double fk = ((double)b + off) * s->df, wgt = (double)k * k * fmin(snr, 60.0);
		num += wgt * fk / k;
		den += wgt;
		h->harmonic[h->n] = k;
		h->snr_db[h->n++] = snr;
	}
	h->f0_hz = den > 0.0 ? num / den : 0.0;
}

int gf_hum_detect_samples(const double *x, size_t n, double rate, uint32_t max_harmonic, struct gf_hum *h,
			  struct gf_errbuf *eb)
{
	memset(h, 0, sizeof(*h));
	struct spectrum s = {0};
	if (n < (size_t)(1.0 * rate)) {
		gf_errbuf_set(eb, "hum detection needs at least 1 s of input (%.2f s given)",
			      (double)n / rate);
		return GF_E_CONFIG;
	}
	int r = make_spectrum(x, n, rate, &s, eb);
	if (!r) {
		h->seconds = (double)n / rate;
		double s50, s60, f50 = best_fundamental(&s, 50.0, max_harmonic, rate, &s50),
				 f60 = best_fundamental(&s, 60.0, max_harmonic, rate, &s60);
		harmonics_above(&s, s50 >= s60 ? f50 : f60, max_harmonic, rate, h);
		double secs = h->seconds;
		/* The fundamental was fitted to the strongest peaks over hundreds of
		 * candidates and each harmonic's peak is the best of a few bins: one
		 * harmonic just over the line is what noise alone gives about once in
		 * a few hundred files. A single harmonic must stand 6 dB higher. */
		if (h->n == 1 && h->snr_db[0] < GF_HUM_MIN_SNR_DB + 6.0)
			h->n = 0;
		if (!h->n)
			memset(h, 0, sizeof(*h)), h->seconds = secs;
	}
	free(s.p);
	return r;
}

int gf_hum_detect(const char *path, double rate, uint32_t max_harmonic, struct gf_hum *h,
		  struct gf_errbuf *eb)
{
	memset(h, 0, sizeof(*h));
	double *x = NULL;
	size_t n = 0;
	int r = read_mono(path, rate, &x, &n, eb);
	if (!r && n < (size_t)(1.0 * rate)) {
		gf_errbuf_set(eb,
			      "freq_hz: \"auto\" needs at least 1 s of input to find the hum (%s has %.2f s)",
			      path, (double)n / rate);
		r = GF_E_CONFIG;
	}
	if (!r)
		r = gf_hum_detect_samples(x, n, rate, max_harmonic, h, eb);
	fftw_free(x);
	return r;
}
