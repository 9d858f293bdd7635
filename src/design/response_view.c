/*
 * A mixer seen per output (response_view.h): each output's paths summed into one FIR, the
 * sums hashed so that identical ones are analysed and drawn once. Outputs without a path
 * have no row (their output is silence).
 */
#include "response_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_ROW UINT32_MAX

void gf_response_view_free(struct gf_response_view *v)
{
	free(v->sums);
	free(v->of_output);
	free(v->n_firs);
	free(v->abs_sum);
	memset(v, 0, sizeof(*v));
}

static uint64_t row_hash(const float *x, uint32_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t w;
		memcpy(&w, &x[k], sizeof(w));
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h;
}

/* Rows 0..rows-1 of v->sums made distinct, in order; row_of[r] becomes the distinct index. */
static int dedupe(struct gf_response_view *v, uint32_t rows, uint32_t *row_of)
{
	size_t size = 16;
	while (size < 2 * (size_t)rows)
		size <<= 1;
	uint32_t *slot = malloc(size * sizeof(*slot));
	if (!slot)
		return GF_E_NOMEM;
	memset(slot, 0xff, size * sizeof(*slot));
	size_t row_bytes = (size_t)v->taps * sizeof(float);
	uint32_t d = 0;
	for (uint32_t r = 0; r < rows; r++) {
		float *x = v->sums + (size_t)r * v->taps;
		size_t i = (size_t)row_hash(x, v->taps) & (size - 1);
		while (slot[i] != NO_ROW && memcmp(v->sums + (size_t)slot[i] * v->taps, x, row_bytes) != 0)
			i = (i + 1) & (size - 1);
		if (slot[i] == NO_ROW) {
			memmove(v->sums + (size_t)d * v->taps, x, row_bytes);
			slot[i] = d++;
		}
		row_of[r] = slot[i];
	}
	free(slot);
	v->n_distinct = d;
	return 0;
}

/* Each output's paths added into its row (a row per output with a path), and the worst cases. */
static void add_paths(struct gf_response_view *v, const float *coeffs, const uint32_t *fir_out,
		      const uint32_t *row)
{
	for (uint32_t p = 0; p < v->firs; p++) {
		const float *h = coeffs + (size_t)p * v->taps;
		float *y = v->sums + (size_t)row[fir_out[p]] * v->taps;
		double a = 0.0;
		for (uint32_t k = 0; k < v->taps; k++) {
			y[k] += h[k];
			a += h[k] < 0.0f ? -(double)h[k] : (double)h[k];
		}
		v->abs_sum[fir_out[p]] += a;
	}
}

int gf_response_view_new(struct gf_response_view *v, const float *coeffs, uint32_t firs, uint32_t taps,
			 const uint32_t *fir_out, uint32_t outputs)
{
	memset(v, 0, sizeof(*v));
	v->outputs = outputs, v->taps = taps, v->firs = firs;
	for (uint32_t p = 0; p < firs; p++)
		if (fir_out[p] >= outputs)
			return GF_E_INVAL;
	v->of_output = malloc((outputs ? outputs : 1) * sizeof(*v->of_output));
	v->n_firs = calloc(outputs ? outputs : 1, sizeof(*v->n_firs));
	v->abs_sum = calloc(outputs ? outputs : 1, sizeof(*v->abs_sum));
	if (!v->of_output || !v->n_firs || !v->abs_sum)
		goto nomem;
	for (uint32_t p = 0; p < firs; p++)
		v->n_firs[fir_out[p]]++;
	uint32_t rows = 0;
	for (uint32_t o = 0; o < outputs; o++)
		v->of_output[o] = v->n_firs[o] ? rows++ : NO_ROW;
	v->sums = calloc((size_t)(rows ? rows : 1) * taps, sizeof(float));
	if (!v->sums)
		goto nomem;
	add_paths(v, coeffs, fir_out, v->of_output);
	for (size_t i = 0; i < (size_t)rows * taps; i++)
		v->sums[i] += 0.0f; /* -0 is +0: equal sums hash alike */
	uint32_t *row_of = malloc((rows ? rows : 1) * sizeof(*row_of));
	if (!row_of || dedupe(v, rows, row_of) != 0) {
		free(row_of);
		goto nomem;
	}
	for (uint32_t o = 0; o < outputs; o++)
		if (v->of_output[o] != NO_ROW)
			v->of_output[o] = row_of[v->of_output[o]];
	free(row_of);
	return 0;
nomem:
	gf_response_view_free(v);
	return GF_E_NOMEM;
}

void gf_response_view_plot_free(struct gf_response_view_plot *p)
{
	free(p->label);
	free(p->labels);
	p->label = NULL, p->labels = NULL;
}

/* "output 3", or "outputs 3 (+1020)" where the sum is shared. */
static void label_of(const struct gf_response_view *v, uint32_t d, char *buf, size_t size)
{
	uint32_t first = NO_ROW, n = 0;
	for (uint32_t o = 0; o < v->outputs; o++)
		if (v->of_output[o] == d) {
			if (first == NO_ROW)
				first = o;
			n++;
		}
	if (n == 1)
		snprintf(buf, size, "output %u", first);
	else
		snprintf(buf, size, "outputs %u (+%u)", first, n - 1);
}

int gf_response_view_plot(const struct gf_response_view *v, uint32_t rate, const char *source,
			  struct gf_response_view_plot *p)
{
	uint32_t drawn =
		v->n_distinct < GF_RESPONSE_VIEW_PLOT_MAX ? v->n_distinct : GF_RESPONSE_VIEW_PLOT_MAX;
	memset(p, 0, sizeof(*p));
	p->label = calloc(drawn ? drawn : 1, sizeof(*p->label));
	p->labels = calloc(drawn ? drawn : 1, sizeof(*p->labels));
	if (!p->label || !p->labels) {
		gf_response_view_plot_free(p);
		return GF_E_NOMEM;
	}
	for (uint32_t d = 0; d < drawn; d++) {
		label_of(v, d, p->label[d], sizeof(p->label[d]));
		p->labels[d] = p->label[d];
	}
	p->t = (struct gf_plot_taps){v->sums, drawn, v->taps, rate, "output", p->labels};
	const char *name = source ? source : "built-in default", *slash = strrchr(name, '/');
	char more[80] = "";
	if (drawn < v->n_distinct)
		snprintf(more, sizeof(more), ", the first %u drawn", drawn);
	snprintf(p->title, sizeof(p->title),
		 "%s: %u Hz, mixer of %u paths, %u taps; per output, the sum of its paths: %u distinct%s",
		 slash ? slash + 1 : name, rate, v->firs, v->taps, v->n_distinct, more);
	return 0;
}

int gf_response_plot_set(FILE *out, char **str, size_t *len, const float *coeffs, uint32_t firs,
			 uint32_t taps, const uint32_t *fir_out, uint32_t outputs, uint32_t rate,
			 const char *source)
{
	struct gf_response_view v = {0};
	struct gf_response_view_plot p = {0};
	struct gf_plot_taps plain = {coeffs, firs, taps, rate, "channel", NULL};
	const struct gf_plot_taps *t = &plain;
	const char *title = p.title;
	int err = 0;
	if (fir_out) {
		err = gf_response_view_new(&v, coeffs, firs, taps, fir_out, outputs);
		if (!err)
			err = gf_response_view_plot(&v, rate, source, &p);
		t = &p.t;
	} else {
		gf_response_svg_title(p.title, sizeof(p.title), source, &plain);
	}
	if (!err && out)
		err = gf_response_svg(out, t, title);
	else if (!err && !(*str = gf_response_svg_string(t, title, len, &err)))
		err = err ? err : GF_E_NOMEM;
	gf_response_view_plot_free(&p);
	gf_response_view_free(&v);
	return err;
}
