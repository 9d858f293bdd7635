/*
 * design = "denoise": Welch power spectrum of a noise sample, smoothed,
 * turned into a bounded Wiener-style gain, sampled into a linear-phase FIR.
 */
#include "denoise.h"

#include <fftw3.h>
#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fftw_plan.h"
#include "noise_file.h"

struct welch {
	size_t len, bins;
	double *win, *seg, *psd; /* len, len, bins */
	fftw_complex *spec;
	fftw_plan plan;
	uint32_t segments;
	double sumsq; /* of every sample read, for the level */
	uint64_t samples;
};

static void welch_free(struct welch *w)
{
	if (w->plan)
		gf_fftw_destroy(w->plan);
	fftw_free(w->seg);
	fftw_free(w->spec);
	free(w->win);
	free(w->psd);
}

/* @p key: the setting whose file is measured, for messages. */
static int welch_init(struct welch *w, size_t len, const char *key, struct gf_errbuf *eb)
{
	memset(w, 0, sizeof(*w));
	w->len = len;
	w->bins = len / 2 + 1;
	char what[96];
	snprintf(what, sizeof(what), "%s: the Welch spectrum", key);
	uint64_t arrays = (uint64_t)len * 2 * sizeof(double) + (uint64_t)w->bins * (sizeof(fftw_complex) + 8);
	int r = gf_fft_room(len, arrays, what, eb);
	if (r)
		return r;
	w->win = malloc(len * sizeof(double));
	w->psd = calloc(w->bins, sizeof(double));
	w->seg = fftw_malloc(len * sizeof(double));
	w->spec = fftw_malloc(w->bins * sizeof(fftw_complex));
	if (w->win && w->psd && w->seg && w->spec)
		w->plan = gf_fftw_plan_r2c((int)len, w->seg, w->spec);
	if (!w->plan)
		return gf_fft_nomem(len, what, eb);
	for (size_t i = 0; i < len; i++) /* periodic Hann: half overlap sums to a constant */
		w->win[i] = 0.5 - 0.5 * cos(2.0 * M_PI * (double)i / (double)len);
	return 0;
}

/* One segment of channel @p c of the interleaved @p x (len frames). */
static void welch_add(struct welch *w, const float *x, uint32_t channels, uint32_t c)
{
	for (size_t i = 0; i < w->len; i++)
		w->seg[i] = w->win[i] * x[i * channels + c];
	fftw_execute(w->plan);
	for (size_t k = 0; k < w->bins; k++)
		w->psd[k] += w->spec[k][0] * w->spec[k][0] + w->spec[k][1] * w->spec[k][1];
	w->segments++;
}

/* Read the noise file in half-segment hops; every channel's segments are averaged. */
static int measure(const char *path, const char *key, double rate, struct welch *w, struct gf_errbuf *eb)
{
	SF_INFO info;
	SNDFILE *f;
	int r = gf_noise_open(path, key, rate, &f, &info, eb); /* as design = "suppress" opens its own */
	if (r)
		return r;
	uint32_t ch = (uint32_t)info.channels, hop = (uint32_t)(w->len / 2);
	float *buf = malloc(w->len * ch * sizeof(float));
	if (!buf) {
		sf_close(f);
		return GF_E_NOMEM;
	}
	sf_count_t have = sf_readf_float(f, buf, (sf_count_t)hop);
	for (sf_count_t i = 0; i < have * (sf_count_t)ch; i++)
		w->sumsq += (double)buf[i] * buf[i];
	w->samples += (uint64_t)have * ch;
	while (have == (sf_count_t)hop) {
		sf_count_t got = sf_readf_float(f, buf + (size_t)hop * ch, (sf_count_t)hop);
		for (sf_count_t i = 0; i < got * (sf_count_t)ch; i++)
			w->sumsq += (double)buf[hop * ch + i] * buf[hop * ch + i];
		w->samples += (uint64_t)got * ch;
		if (got < (sf_count_t)hop)
			break;
		for (uint32_t c = 0; c < ch; c++)
			welch_add(w, buf, ch, c);
		memmove(buf, buf + (size_t)hop * ch, (size_t)hop * ch * sizeof(float));
	}
	free(buf);
	sf_close(f);
	for (size_t k = 0; w->segments && k < w->bins; k++)
		w->psd[k] /= (double)w->segments; /* noise and program on one scale */
	return r;
}

/* 1/6-octave moving average of the power spectrum (at least 3 bins wide). */
static int smooth(const double *psd, size_t bins, double *out)
{
	double *cum = malloc((bins + 1) * sizeof(double));
	if (!cum)
		return GF_E_NOMEM;
	cum[0] = 0.0;
	for (size_t k = 0; k < bins; k++)
		cum[k + 1] = cum[k] + psd[k];
	const double half = pow(2.0, 1.0 / 12.0); /* +-1/12 octave */
	for (size_t k = 0; k < bins; k++) {
		size_t lo = (size_t)floor((double)k / half), hi = (size_t)ceil((double)k * half);
		lo = k >= 1 && lo > k - 1 ? k - 1 : lo;
		hi = hi < k + 1 ? k + 1 : hi;
		hi = hi > bins - 1 ? bins - 1 : hi;
		out[k] = (cum[hi + 1] - cum[lo]) / (double)(hi + 1 - lo);
	}
	free(cum);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Where the program's spectrum is known: Wiener's S / (S + N) = 1 - N / P, P = S + N measured. */
static void program_gain(double *n, const double *p, size_t bins)
{
	for (size_t k = 0; k < bins; k++)
		n[k] = p[k] > 0.0 ? fmax(1.0 - n[k] / p[k], 0.0) : 0.0;
}

/* The bounded Wiener-style gain on the Welch bins: in @p n the smoothed noise power, out the gain. */
static int wiener_gain(double *n, const double *program, size_t bins, double rate, double reduction_db,
		       struct gf_denoise_report *rep)
{
	/* over 20 Hz .. 0.45 rate: DC and the band edge say nothing about the room */
	size_t k0 = (size_t)ceil(20.0 / (rate / 2.0) * (double)(bins - 1)),
	       k1 = (size_t)(0.9 * (double)(bins - 1));
	double *tmp = malloc((k1 - k0 + 1) * sizeof(double));
	if (!tmp)
		return GF_E_NOMEM;
	memcpy(tmp, n + k0, (k1 - k0 + 1) * sizeof(double));
	qsort(tmp, k1 - k0 + 1, sizeof(double), cmp_double);
	double ref = tmp[(k1 - k0) / 10]; /* the quietest tenth of the band: the noise's own floor */
	free(tmp);
	if (program) {
		program_gain(n, program, bins);
	} else { /* Wiener's gain for a program at ref, doubled: 0 dB where the noise is at its floor */
		for (size_t k = 0; k < bins; k++)
			n[k] = fmin(2.0 * ref / (ref + n[k]), 1.0);
	}
	double gmin = pow(10.0, -reduction_db / 20.0);
	uint32_t cut = 0;
	rep->max_cut_db = 0.0;
	for (size_t k = 0; k < bins; k++) {
		n[k] = fmax(n[k], gmin);
		double db = -20.0 * log10(n[k]);
		if (k >= k0 && k <= k1 && db > rep->max_cut_db)
			rep->max_cut_db = db, rep->max_cut_hz = (double)k * rate / (2.0 * (double)(bins - 1));
		cut += k >= k0 && k <= k1 && db >= 3.0;
	}
	rep->cut_fraction = (double)cut / (double)(k1 - k0 + 1);
	return 0;
}

/* The zero-phase gain @p g (len/2+1 bins) as a Hann-windowed odd FIR of @p taps. */
static int gain_to_fir(const double *g, size_t len, uint32_t taps, double **out, struct gf_errbuf *eb)
{
	size_t bins = len / 2 + 1;
	const char *what = "taps: the filter from its gain";
	int r = gf_fft_room(len, len * sizeof(double) + bins * sizeof(fftw_complex) + taps * sizeof(double),
			    what, eb);
	if (r)
		return r;
	fftw_complex *spec = fftw_malloc(bins * sizeof(fftw_complex));
	double *t = fftw_malloc(len * sizeof(double)), *h = malloc(taps * sizeof(double));
	fftw_plan p = spec && t ? gf_fftw_plan_c2r((int)len, spec, t) : NULL;
	if (!p || !h) {
		r = gf_fft_nomem(len, what, eb);
		goto out;
	}
	for (size_t k = 0; k < bins; k++)
		spec[k][0] = g[k], spec[k][1] = 0.0;
	fftw_execute(p);
	uint32_t m = (taps - 1) / 2;
	for (uint32_t i = 0; i < taps; i++) {
		long d = (long)i - (long)m; /* circular index of lag d */
		double w = 0.5 + 0.5 * cos(M_PI * (double)d / (double)(m + 1));
		h[i] = w * t[(size_t)(d < 0 ? (long)len + d : d)] / (double)len;
	}
	*out = h;
	h = NULL;
	r = 0;
out:
	if (p)
		gf_fftw_destroy(p);
	fftw_free(spec);
	fftw_free(t);
	free(h);
	return r;
}

static size_t segment_len(uint32_t taps)
{
	size_t len = 256;
	while (len < (size_t)taps * GF_DENOISE_SEGMENT_FACTOR)
		len <<= 1;
	return len;
}

static int check_sample(const struct welch *w, const char *path, double rate, struct gf_denoise_report *rep,
			struct gf_errbuf *eb)
{
	rep->seconds = w->samples ? (double)w->samples / rate : 0.0;
	rep->segments = w->segments;
	rep->rms_dbfs = w->samples ? 10.0 * log10(w->sumsq / (double)w->samples + 1e-300) : -INFINITY;
	uint32_t need = GF_DENOISE_MIN_SEGMENTS;
	if (w->segments < need) {
		double secs = (double)(need + 1) * (double)(w->len / 2) / rate;
		gf_errbuf_set(eb,
			      "noise: %s holds %.2f s of audio, too short to measure: give at least %.2f s "
			      "(%u half-overlapping segments of %zu samples; fewer taps need less)",
			      path, rep->seconds, secs, need, w->len);
		return GF_E_CONFIG;
	}
	if (!(rep->rms_dbfs > GF_DENOISE_SILENCE_DBFS)) {
		gf_errbuf_set(eb,
			      "noise: %s is silent (%.1f dBFS RMS, below %.0f dBFS): record the room's noise",
			      path, rep->rms_dbfs, GF_DENOISE_SILENCE_DBFS);
		return GF_E_CONFIG;
	}
	return 0;
}

/* The program's smoothed spectrum into a malloc'ed *out, or NULL without a program file. */
static int measure_program(const char *path, size_t len, double rate, double **out, struct gf_errbuf *eb)
{
	*out = NULL;
	if (!path)
		return 0;
	struct welch w;
	int r = welch_init(&w, len, "input", eb);
	if (!r)
		r = measure(path, "input", rate, &w, eb);
	if (!r && w.segments == 0)
		r = 0; /* too short to say anything: the prior is used */
	else if (!r && !(*out = malloc(w.bins * sizeof(double))))
		r = GF_E_NOMEM;
	if (!r && *out)
		r = smooth(w.psd, w.bins, *out);
	welch_free(&w);
	return r;
}

int gf_denoise_design(const char *path, const char *program, double rate, uint32_t taps, double reduction_db,
		      double **h, uint32_t *n, struct gf_denoise_report *rep, struct gf_errbuf *eb)
{
	struct gf_denoise_report local;
	rep = rep ? rep : &local;
	memset(rep, 0, sizeof(*rep));
	*h = NULL;
	*n = 0;
	taps = taps ? taps : GF_DENOISE_DEFAULT_TAPS;
	if (!(taps & 1u)) {
		gf_errbuf_set(eb, "taps: must be odd for a linear-phase denoise filter (got %u)", taps);
		return GF_E_CONFIG;
	}
	struct welch w;
	int r = welch_init(&w, segment_len(taps), "noise", eb);
	double *sm = r ? NULL : malloc(w.bins * sizeof(double)), *prog = NULL;
	if (!r && !sm)
		r = GF_E_NOMEM;
	if (!r)
		r = measure(path, "noise", rate, &w, eb);
	if (!r)
		r = check_sample(&w, path, rate, rep, eb);
	if (!r)
		r = smooth(w.psd, w.bins, sm);
	if (!r)
		r = measure_program(program, w.len, rate, &prog, eb);
	rep->from_program = prog != NULL;
	if (!r)
		r = wiener_gain(sm, prog, w.bins, rate, reduction_db, rep);
	if (!r)
		r = gain_to_fir(sm, w.len, taps, h, eb);
	if (!r)
		*n = taps;
	free(sm);
	free(prog);
	welch_free(&w);
	return r;
}
