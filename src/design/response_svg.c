/*
 * A filter set's response drawn as an SVG, no library: --plot writes it to a
 * file, the daemon serves it beside its control page. Three panels share one column (a phone shows it full
 * width): magnitude in dB and group delay in ms over a log frequency axis, and the taps over time. The
 * viewBox makes it scale; text is in the same units, so it scales with it. Each panel's group carries its
 * axis ranges as data-* attributes, so that a test (or a script) can turn points back into values.
 */
#define _GNU_SOURCE /* open_memstream */
#include "response_svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "response.h"

#define W 640.0
#define LEFT 72.0
#define RIGHT 20.0
#define PANEL_H 250.0
#define PANEL_GAP 78.0
#define N_FREQS 400
#define F_LOW 10.0
#define DB_SPAN_MAX 140.0
#define GD_MASK_DB 40.0	    /* group delay is drawn where |H| is within this of the channel's peak */
#define IMPULSE_POINTS 2000 /* longer filters are drawn as a min/max envelope */

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
				      "#9467bd", "#8c564b", "#e377c2", "#17becf"};
#define N_COLOURS (sizeof(colours) / sizeof(colours[0]))

struct panel {
	const char *id, *title, *xlabel, *ylabel;
	double top;	   /* y of the frame in the viewBox */
	double xmin, xmax; /* data range; log10 scale when xlog */
	double ymin, ymax;
	int xlog;
};

/* Per channel: |H| in dB and group delay in ms at the shared frequencies. */
struct curves {
	double f[N_FREQS];
	double *db, *gd_ms; /* channels x N_FREQS; gd NAN where not drawn */
	uint32_t last_tap;  /* highest nonzero tap over all channels, + 1 */
};

static const float *channel(const struct gf_plot_taps *t, uint32_t c)
{
	return t->coeffs + (size_t)c * t->taps;
}

/* The first FIR before @p c with the same taps, or -1. Its curves would hide under that one's:
 * they are dashed, and the legend says which they equal. */
static int same_as(const struct gf_plot_taps *t, uint32_t c)
{
	for (uint32_t k = 0; k < c; k++)
		if (memcmp(channel(t, k), channel(t, c), (size_t)t->taps * sizeof(float)) == 0)
			return (int)k;
	return -1;
}

static double map_x(const struct panel *p, double x)
{
	double w = W - LEFT - RIGHT;
	if (p->xlog)
		return LEFT + w * (log10(x) - log10(p->xmin)) / (log10(p->xmax) - log10(p->xmin));
	return LEFT + w * (x - p->xmin) / (p->xmax - p->xmin);
}

static double map_y(const struct panel *p, double y)
{
	if (y < p->ymin)
		y = p->ymin;
	if (y > p->ymax)
		y = p->ymax;
	return p->top + PANEL_H * (p->ymax - y) / (p->ymax - p->ymin);
}

/* A 1-2-5 step giving about @p n intervals over @p range. */
static double nice_step(double range, int n)
{
	double raw = range / n, mag = pow(10.0, floor(log10(raw)));
	double r = raw / mag;
	return mag * (r <= 1.0 ? 1.0 : r <= 2.0 ? 2.0 : r <= 5.0 ? 5.0 : 10.0);
}

static void fmt_hz(char *buf, size_t size, double f)
{
	if (f >= 1000.0)
		snprintf(buf, size, "%gk", f / 1000.0);
	else
		snprintf(buf, size, "%g", f);
}

static void panel_frame(FILE *o, const struct panel *p)
{
	double x0 = LEFT, x1 = W - RIGHT, y0 = p->top, y1 = p->top + PANEL_H;
	fprintf(o,
		"<g class=\"panel\" id=\"%s\" data-x0=\"%.2f\" data-x1=\"%.2f\" data-y0=\"%.2f\" "
		"data-y1=\"%.2f\" data-xmin=\"%.9g\" data-xmax=\"%.9g\" data-xlog=\"%d\" data-ymin=\"%.9g\" "
		"data-ymax=\"%.9g\">\n",
		p->id, x0, x1, y0, y1, p->xmin, p->xmax, p->xlog, p->ymin, p->ymax);
	fprintf(o, "<text class=\"title\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", x0, y0 - 10.0, p->title);
	fprintf(o, "<rect class=\"frame\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n", x0, y0,
		x1 - x0, PANEL_H);
	/* horizontal grid and y labels */
	double step = nice_step(p->ymax - p->ymin, 8);
	for (double v = ceil(p->ymin / step) * step; v <= p->ymax + step * 1e-9; v += step) {
		double y = map_y(p, v);
		fprintf(o, "<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", x0, y,
			x1, y);
		fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			x0 - 6.0, y + 5.0, fabs(v) < step * 1e-6 ? 0.0 : v);
	}
	/* vertical grid and x labels: 1-2-5 per decade on a log axis */
	if (p->xlog) {
		for (double dec = pow(10.0, floor(log10(p->xmin))); dec <= p->xmax; dec *= 10.0) {
			static const double m[] = {1.0, 2.0, 5.0};
			for (int i = 0; i < 3; i++) {
				double f = dec * m[i];
				if (f < p->xmin * 0.999 || f > p->xmax * 1.001)
					continue;
				char lab[16];
				fmt_hz(lab, sizeof(lab), f);
				double x = map_x(p, f);
				fprintf(o,
					"<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
					"y2=\"%.2f\"/>\n"
					"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
					"text-anchor=\"middle\">%s</text>\n",
					x, y0, x, y1, x, y1 + 18.0, lab);
			}
		}
	} else {
		double xs = nice_step(p->xmax - p->xmin, 6);
		for (double v = ceil(p->xmin / xs) * xs; v <= p->xmax + xs * 1e-9; v += xs) {
			double x = map_x(p, v);
			fprintf(o,
				"<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n"
				"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
				"text-anchor=\"middle\">%g</text>\n",
				x, y0, x, y1, x, y1 + 18.0, v);
		}
	}
	fprintf(o, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
		(x0 + x1) / 2.0, y1 + 40.0, p->xlabel);
	fprintf(o,
		"<text class=\"label\" x=\"18\" y=\"%.1f\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 18 %.1f)\">%s</text>\n",
		(y0 + y1) / 2.0, (y0 + y1) / 2.0, p->ylabel);
}

/*
 * One polyline per run of finite values (NAN breaks the line). data-x holds
 * the points' exact x values (Hz or ms), which the pixel coordinates round.
 */
static void polyline(FILE *o, const struct panel *p, uint32_t c, int dashed, const double *x, const double *y,
		     size_t n)
{
	for (size_t i = 0; i < n;) {
		if (!isfinite(y[i])) {
			i++;
			continue;
		}
		size_t end = i;
		while (end < n && isfinite(y[end]))
			end++;
		fprintf(o, "<polyline class=\"curve\" data-channel=\"%u\" stroke=\"%s\"%s data-x=\"", c,
			colours[c % N_COLOURS], dashed ? " stroke-dasharray=\"7 7\"" : "");
		for (size_t k = i; k < end; k++)
			fprintf(o, "%s%.17g", k > i ? " " : "", x[k]);
		fputs("\" points=\"", o);
		for (size_t k = i; k < end; k++)
			fprintf(o, "%s%.2f,%.2f", k > i ? " " : "", map_x(p, x[k]), map_y(p, y[k]));
		fputs("\"/>\n", o);
		i = end;
	}
}

static int compute_curves(const struct gf_plot_taps *fs, uint32_t rate, struct curves *cv)
{
	size_t n = (size_t)fs->channels * N_FREQS;
	cv->db = malloc(n * sizeof(double));
	cv->gd_ms = malloc(n * sizeof(double));
	if (!cv->db || !cv->gd_ms)
		return GF_E_NOMEM;
	double fhi = rate / 2.0;
	for (int i = 0; i < N_FREQS; i++)
		cv->f[i] = F_LOW * pow(fhi / F_LOW, (double)i / (N_FREQS - 1));
	cv->last_tap = 1;
	for (uint32_t c = 0; c < fs->channels; c++) {
		const float *h = channel(fs, c);
		for (uint32_t k = fs->taps; k > cv->last_tap; k--)
			if (h[k - 1] != 0.0f) {
				cv->last_tap = k;
				break;
			}
		double *db = cv->db + (size_t)c * N_FREQS, *gd = cv->gd_ms + (size_t)c * N_FREQS,
		       peak = -INFINITY;
		/* the same frequencies for every channel: a long filter's are moved to FFT bins */
		int err = gf_response_curve(h, fs->taps, rate, cv->f, N_FREQS, db, gd);
		if (err)
			return err;
		for (int i = 0; i < N_FREQS; i++) {
			db[i] = db[i] > 0.0 ? 20.0 * log10(db[i]) : -INFINITY;
			gd[i] *= 1000.0 / rate;
			peak = fmax(peak, db[i]);
		}
		for (int i = 0; i < N_FREQS; i++)
			if (!(db[i] >= peak - GD_MASK_DB))
				gd[i] = NAN;
	}
	return 0;
}

/* Axis ranges from the data: dB to the next 10 above the peak, at most DB_SPAN_MAX below. */
static void ranges(const struct gf_plot_taps *fs, const struct curves *cv, struct panel *mag,
		   struct panel *gd)
{
	double top = -INFINITY, bot = INFINITY, glo = INFINITY, ghi = -INFINITY;
	for (size_t i = 0; i < (size_t)fs->channels * N_FREQS; i++) {
		if (isfinite(cv->db[i])) {
			top = fmax(top, cv->db[i]);
			bot = fmin(bot, cv->db[i]);
		}
		if (isfinite(cv->gd_ms[i])) {
			glo = fmin(glo, cv->gd_ms[i]);
			ghi = fmax(ghi, cv->gd_ms[i]);
		}
	}
	if (!isfinite(top))
		top = 0.0, bot = -60.0;
	mag->ymax = ceil((top + 1.0) / 10.0) * 10.0;
	mag->ymin = fmax(floor(bot / 10.0) * 10.0, mag->ymax - DB_SPAN_MAX);
	if (mag->ymax - mag->ymin < 40.0)
		mag->ymin = mag->ymax - 40.0;
	if (!isfinite(glo))
		glo = ghi = 0.0;
	double pad = fmax((ghi - glo) * 0.08, 0.5);
	gd->ymin = glo - pad;
	gd->ymax = ghi + pad;
}

static void impulse(FILE *o, const struct gf_plot_taps *fs, uint32_t rate, uint32_t last, struct panel *p)
{
	uint32_t bins = last > IMPULSE_POINTS ? IMPULSE_POINTS : last;
	double *x = malloc(2 * (size_t)bins * sizeof(double)), *y = malloc(2 * (size_t)bins * sizeof(double));
	if (!x || !y) {
		free(x), free(y);
		return;
	}
	for (uint32_t c = 0; c < fs->channels; c++) {
		const float *h = channel(fs, c);
		size_t n = 0;
		for (uint32_t b = 0; b < bins; b++) {
			uint32_t k0 = (uint32_t)((uint64_t)b * last / bins),
				 k1 = (uint32_t)((uint64_t)(b + 1) * last / bins);
			double lo = h[k0], hi = h[k0];
			for (uint32_t k = k0 + 1; k < k1; k++)
				lo = fmin(lo, h[k]), hi = fmax(hi, h[k]);
			x[n] = 1000.0 * k0 / rate, y[n++] = lo;
			if (k1 - k0 > 1) /* an envelope: the bin's minimum and maximum at one time */
				x[n] = x[n - 1], y[n++] = hi;
		}
		polyline(o, p, c, same_as(fs, c) >= 0, x, y, n);
		for (uint32_t k = 0; last <= 64 && k < last; k++) /* few taps: mark each one */
			fprintf(o, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"/>\n",
				map_x(p, 1000.0 * k / rate), map_y(p, h[k]), colours[c % N_COLOURS]);
	}
	free(x), free(y);
}

static void impulse_range(const struct gf_plot_taps *fs, uint32_t last, struct panel *p)
{
	double lo = 0.0, hi = 0.0;
	for (uint32_t c = 0; c < fs->channels; c++)
		for (uint32_t k = 0; k < last; k++) {
			double v = channel(fs, c)[k];
			lo = fmin(lo, v), hi = fmax(hi, v);
		}
	double pad = fmax((hi - lo) * 0.06, 1e-6);
	p->ymin = lo - pad;
	p->ymax = hi + pad;
}

static void header(FILE *o, double height, const char *title, const struct gf_plot_taps *t)
{
	fprintf(o,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" width=\"100%%\" "
		"font-family=\"sans-serif\">\n"
		"<style>text{font-size:15px;fill:#222}.title{font-size:17px;font-weight:bold}"
		".tick{font-size:13px;fill:#444}.frame{fill:none;stroke:#444;stroke-width:1}"
		".grid{stroke:#ddd;stroke-width:1}.curve{fill:none;stroke-width:1.6;stroke-linejoin:round}"
		"</style>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
		W, height);
	fprintf(o, "<text class=\"title\" x=\"%.1f\" y=\"26\">", LEFT);
	for (const char *s = title; *s; s++) { /* the config's path: escape what XML needs */
		if (*s == '<')
			fputs("&lt;", o);
		else if (*s == '>')
			fputs("&gt;", o);
		else if (*s == '&')
			fputs("&amp;", o);
		else if ((unsigned char)*s >= 0x20)
			fputc(*s, o);
	}
	fputs("</text>\n", o);
	const char *word = t->legend ? t->legend : "channel";
	for (uint32_t c = 0; c < t->channels; c++) {
		double x = LEFT + (c % 4) * 140.0, y = 50.0 + (c / 4) * 22.0;
		int same = same_as(t, c);
		char eq[160] = "";
		if (same >= 0 && t->labels)
			snprintf(eq, sizeof(eq), " = %s", t->labels[same]);
		else if (same >= 0)
			snprintf(eq, sizeof(eq), " = %s %d", word, same);
		fprintf(o,
			"<g class=\"legend\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"%s\" stroke-width=\"3\"%s/><text x=\"%.1f\" y=\"%.1f\">",
			x, y - 5.0, x + 26.0, y - 5.0, colours[c % N_COLOURS],
			same >= 0 ? " stroke-dasharray=\"7 7\"" : "", x + 32.0, y);
		if (t->labels)
			fprintf(o, "%s%s</text></g>\n", t->labels[c], eq);
		else
			fprintf(o, "%s %u%s</text></g>\n", word, c, eq);
	}
}

int gf_response_svg(FILE *o, const struct gf_plot_taps *fs, const char *title)
{
	uint32_t rate = fs->rate;
	struct curves cv = {0};
	int r = compute_curves(fs, rate, &cv);
	if (r)
		goto out;
	double top = 50.0 + ((fs->channels + 3) / 4) * 22.0 + 30.0;
	struct panel mag = {
		"magnitude", "Magnitude", "frequency (Hz)", "gain (dB)", top, F_LOW, rate / 2.0, 0, 0, 1};
	struct panel gd = {"group-delay",
			   "Group delay",
			   "frequency (Hz)",
			   "delay (ms)",
			   top + PANEL_H + PANEL_GAP,
			   F_LOW,
			   rate / 2.0,
			   0,
			   0,
			   1};
	struct panel imp = {"impulse",
			    "Impulse response (taps)",
			    "time (ms)",
			    "amplitude",
			    top + 2 * (PANEL_H + PANEL_GAP),
			    0.0,
			    1000.0 * cv.last_tap / rate,
			    0,
			    0,
			    0};
	ranges(fs, &cv, &mag, &gd);
	impulse_range(fs, cv.last_tap, &imp);
	header(o, imp.top + PANEL_H + 56.0, title, fs);
	struct panel *ps[] = {&mag, &gd, &imp};
	for (int i = 0; i < 3; i++) {
		panel_frame(o, ps[i]);
		for (uint32_t c = 0; c < fs->channels && i < 2; c++)
			polyline(o, ps[i], c, same_as(fs, c) >= 0, cv.f,
				 (i == 0 ? cv.db : cv.gd_ms) + (size_t)c * N_FREQS, N_FREQS);
		if (i == 2)
			impulse(o, fs, rate, cv.last_tap, &imp);
		fputs("</g>\n", o);
	}
	fputs("</svg>\n", o);
	r = ferror(o) ? GF_E_IO : 0;
out:
	free(cv.db);
	free(cv.gd_ms);
	return r;
}

char *gf_response_svg_string(const struct gf_plot_taps *t, const char *title, size_t *len, int *err)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *o = open_memstream(&buf, &size);
	if (!o) {
		*err = GF_E_NOMEM;
		return NULL;
	}
	*err = gf_response_svg(o, t, title);
	if (fclose(o) != 0 && !*err)
		*err = GF_E_NOMEM; /* a memory stream fails only for want of memory */
	if (*err) {
		free(buf);
		return NULL;
	}
	*len = size;
	return buf;
}

void gf_response_svg_title(char *buf, size_t size, const char *source, const struct gf_plot_taps *t)
{
	/* the file's name, not its folder: the title has one line of a phone's width */
	const char *name = source ? source : "built-in default", *slash = strrchr(name, '/');
	snprintf(buf, size, "%s: %u Hz, %u %s%s, %u taps", slash ? slash + 1 : name, t->rate, t->channels,
		 t->legend ? t->legend : "channel", t->channels == 1 ? "" : "s", t->taps);
}
