/*
 * Mains hum followed in a running signal: a window of history, decimated to
 * the hum's band and handed to the file detector once a hop, and hysteresis
 * per harmonic on what it finds.
 */
#include "hum_track.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "design.h"

struct gf_hum_track {
	double rate, rate_d; /* input rate, and the analysis rate (rate / dec) */
	uint32_t dec, hmax;
	double *lp; /* anti-alias low-pass before decimation (NULL when dec == 1) */
	uint32_t lp_n;
	size_t win_d; /* decimated samples analysed */
	size_t need;  /* input samples they take: (win_d - 1) * dec + lp_n */
	float *hist;  /* circular, need samples */
	size_t w, fill, since;
	float *lin; /* the window, oldest first */
	double *xd; /* the decimated window */
	uint64_t analyses;
	struct gf_hum last;
	/* hysteresis: per family (50, 60 Hz) and harmonic, consecutive analyses with and without it */
	uint16_t seen[2][GF_HUM_MAX_HARMONICS + 1], missed[2][GF_HUM_MAX_HARMONICS + 1];
	int fam; /* active family: 0 (50 Hz), 1 (60 Hz), -1 none */
	uint8_t on[GF_HUM_MAX_HARMONICS + 1];
	double snr[GF_HUM_MAX_HARMONICS + 1];
	double f0; /* of the analysis that last changed the set */
};

int gf_hum_family(double f0_hz)
{
	return f0_hz <= 0.0 ? 0 : f0_hz < 55.0 ? 50 : 60;
}

void gf_hum_describe(const struct gf_hum *h, char *buf, size_t len)
{
	if (h->f0_hz <= 0.0 || !h->n) {
		snprintf(buf, len, "none");
		return;
	}
	size_t used = (size_t)snprintf(buf, len, "%d Hz, harmonics", gf_hum_family(h->f0_hz));
	for (uint32_t i = 0; i < h->n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, " %u", h->harmonic[i]);
}

/* The decimation: the analysis rate is at least GF_HUM_TRACK_MIN_RATE and 160 Hz a harmonic
 * (the detector looks up to 0.45 x its rate, and no higher than the highest harmonic). */
static int make_lowpass(struct gf_hum_track *t, struct gf_errbuf *eb)
{
	double want = fmax(GF_HUM_TRACK_MIN_RATE, 160.0 * t->hmax);
	t->dec = t->rate > want ? (uint32_t)floor(t->rate / want) : 1u;
	t->rate_d = t->rate / t->dec;
	if (t->dec == 1) {
		t->lp_n = 1;
		return 0;
	}
	struct gf_design d;
	gf_design_init(&d, GF_DESIGN_LOWPASS);
	/* Only the band analysed must stay clean of aliases: the highest harmonic and its +-5 Hz
	 * floor. Frequencies above rate_d - top fold above top, so the transition can span the rest:
	 * at least 0.16 x rate_d (rate_d >= 160 Hz a harmonic), 0.5 x rate_d with 4 harmonics at 1 kHz. */
	double top = 60.5 * t->hmax + 6.0;
	d.cutoff_hz = 0.5 * t->rate_d;
	d.transition_hz = fmax(t->rate_d - 2.0 * top, 0.16 * t->rate_d);
	d.attenuation_db = 80.0;
	return gf_design_run(&d, t->rate, &t->lp, &t->lp_n, eb);
}

int gf_hum_track_new(struct gf_hum_track **out, double rate, uint32_t max_harmonic, struct gf_errbuf *eb)
{
	*out = NULL;
	if (!(rate >= 2000.0) || max_harmonic < 1 || max_harmonic > GF_HUM_MAX_HARMONICS) {
		gf_errbuf_set(eb, "hum tracker: rate %g Hz, harmonics %u: out of range", rate, max_harmonic);
		return GF_E_INVAL;
	}
	struct gf_hum_track *t = calloc(1, sizeof(*t));
	if (!t)
		return GF_E_NOMEM;
	t->rate = rate;
	t->hmax = max_harmonic;
	t->fam = -1;
	int r = make_lowpass(t, eb);
	if (!r) {
		t->win_d = (size_t)(GF_HUM_TRACK_WINDOW_S * t->rate_d);
		t->need = (t->win_d - 1) * t->dec + t->lp_n;
		t->hist = calloc(t->need, sizeof(float));
		t->lin = malloc(t->need * sizeof(float));
		t->xd = malloc(t->win_d * sizeof(double));
		if (!t->hist || !t->lin || !t->xd)
			r = GF_E_NOMEM;
	}
	if (r) {
		gf_hum_track_free(t);
		return r;
	}
	*out = t;
	return 0;
}

void gf_hum_track_free(struct gf_hum_track *t)
{
	if (!t)
		return;
	free(t->lp);
	free(t->hist);
	free(t->lin);
	free(t->xd);
	free(t);
}

void gf_hum_track_push(struct gf_hum_track *t, const float *x, size_t n)
{
	if (n > t->need) { /* only the newest samples can matter */
		t->since += n - t->need;
		x += n - t->need;
		n = t->need;
	}
	t->since += n;
	while (n) {
		size_t k = t->need - t->w < n ? t->need - t->w : n;
		memcpy(t->hist + t->w, x, k * sizeof(float));
		t->w = (t->w + k) % t->need;
		t->fill = t->fill + k < t->need ? t->fill + k : t->need;
		x += k;
		n -= k;
	}
}

void gf_hum_track_restart(struct gf_hum_track *t)
{
	t->fill = 0;
	t->since = 0;
}

/* The window, low-passed and decimated, into t->xd. */
static void decimate(struct gf_hum_track *t)
{
	size_t head = t->need - t->w; /* the oldest sample is at t->w */
	memcpy(t->lin, t->hist + t->w, head * sizeof(float));
	memcpy(t->lin + head, t->hist, t->w * sizeof(float));
	for (size_t j = 0; j < t->win_d; j++) {
		const float *x = t->lin + j * t->dec + t->lp_n - 1; /* the output's newest input */
		double acc = 0.0;
		if (!t->lp)
			acc = x[0];
		else
			for (uint32_t k = 0; k < t->lp_n; k++)
				acc += t->lp[k] * x[-(ptrdiff_t)k];
		t->xd[j] = acc;
	}
}

/* One analysis's finding into the counters, then the set they make. @return 1 if it changed */
static int hysteresis(struct gf_hum_track *t, const struct gf_hum *h)
{
	int found = h->n ? (gf_hum_family(h->f0_hz) == 50 ? 0 : 1) : -1, changed = 0;
	uint8_t here[GF_HUM_MAX_HARMONICS + 1] = {0};
	for (uint32_t i = 0; i < h->n; i++)
		here[h->harmonic[i]] = 1;
	for (int f = 0; f < 2; f++)
		for (uint32_t k = 1; k <= t->hmax; k++) {
			int yes = f == found && here[k];
			t->seen[f][k] =
				yes ? (uint16_t)(t->seen[f][k] < 60000 ? t->seen[f][k] + 1 : 60000) : 0;
			t->missed[f][k] =
				yes ? 0 : (uint16_t)(t->missed[f][k] < 60000 ? t->missed[f][k] + 1 : 60000);
		}
	for (uint32_t i = 0; i < h->n; i++)
		t->snr[h->harmonic[i]] = h->snr_db[i];
	if (found >= 0 && found != t->fam) /* the other family, seen ON times in a row, replaces the set */
		for (uint32_t k = 1; k <= t->hmax; k++)
			if (t->seen[found][k] >= GF_HUM_TRACK_ON) {
				memset(t->on, 0, sizeof(t->on));
				t->fam = found;
				changed = 1;
				break;
			}
	for (uint32_t k = 1; t->fam >= 0 && k <= t->hmax; k++) {
		if (!t->on[k] && t->seen[t->fam][k] >= GF_HUM_TRACK_ON)
			t->on[k] = 1, changed = 1;
		else if (t->on[k] && t->missed[t->fam][k] >= GF_HUM_TRACK_OFF)
			t->on[k] = 0, changed = 1;
	}
	int any = 0;
	for (uint32_t k = 1; k <= t->hmax; k++)
		any |= t->on[k];
	if (!any)
		t->fam = -1;
	if (changed && found == t->fam && found >= 0)
		t->f0 = h->f0_hz;
	return changed;
}

int gf_hum_track_step(struct gf_hum_track *t, struct gf_errbuf *eb)
{
	size_t hop = (size_t)(GF_HUM_TRACK_HOP_S * t->rate);
	if (t->fill < t->need || t->since < hop)
		return 0;
	t->since = 0;
	decimate(t);
	struct gf_hum h;
	int r = gf_hum_detect_samples(t->xd, t->win_d, t->rate_d, t->hmax, &h, eb);
	if (r)
		return r;
	t->analyses++;
	t->last = h;
	return hysteresis(t, &h);
}

void gf_hum_track_active(const struct gf_hum_track *t, struct gf_hum *out)
{
	memset(out, 0, sizeof(*out));
	if (t->fam < 0)
		return;
	for (uint32_t k = 1; k <= t->hmax; k++)
		if (t->on[k]) {
			out->harmonic[out->n] = k;
			out->snr_db[out->n++] = t->snr[k];
		}
	out->f0_hz = t->f0;
	out->seconds = GF_HUM_TRACK_WINDOW_S;
}

const struct gf_hum *gf_hum_track_last(const struct gf_hum_track *t)
{
	return &t->last;
}

uint64_t gf_hum_track_analyses(const struct gf_hum_track *t)
{
	return t->analyses;
}
