/*
 * The response curve and its SVG (response.c, response_svg.c):
 *   - a short filter's points are evaluated directly, at the frequencies asked;
 *   - a long one's come from an FFT: each frequency moved to its nearest bin
 *     (never by more than half a bin), and |H| and the group delay there equal
 *     the direct sums at that frequency;
 *   - a megatap filter's curve costs two FFTs (the time is printed, not judged);
 *   - the SVG as a string is the SVG as a file, byte for byte, with one curve
 *     per FIR in each frequency panel, the legend's word, and the title escaped;
 *     a FIR with the same taps as an earlier one is dashed and the legend says
 *     which it equals (drawn alike, one curve would hide the other);
 *   - the title names the config file, the rate, the FIRs (singular for one) and the taps;
 *   - a mixer's view (response_view.c): each output the sum of its paths, identical sums once,
 *     the worst case per output, an output without a path left out; its plot draws at most
 *     GF_RESPONSE_VIEW_PLOT_MAX sums, labelled by output, the title saying how many there are.
 */
#define _GNU_SOURCE /* open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "response.h"
#include "response_svg.h"
#include "response_view.h"
#include "testutil.h"

#define RATE 48000.0
#define NF 400

static uint64_t rng;

static void log_freqs(double *f)
{
	for (int i = 0; i < NF; i++)
		f[i] = 10.0 * pow(RATE / 2.0 / 10.0, (double)i / (NF - 1));
}

static double rel(double got, double want)
{
	return fabs(got - want) / fmax(fabs(want), 1e-12);
}

/* The curve of an @p n-tap filter against the direct sums at the frequencies it returns. */
static void curve_case(uint32_t n, int moved)
{
	float *h = malloc(n * sizeof(float));
	double f[NF], f0[NF], mag[NF], gd[NF];
	CHECK(h);
	gf_test_fill_decaying_taps(h, n, &rng);
	log_freqs(f);
	memcpy(f0, f, sizeof(f));
	CHECK_OK(gf_response_curve(h, n, RATE, f, NF, mag, gd));
	double worst_mag = 0.0, worst_gd = 0.0, worst_move = 0.0;
	int n_moved = 0;
	for (int i = 0; i < NF; i += moved ? 7 : 1) { /* a long filter's direct sums are slow: a sample */
		double m, g;
		gf_response_eval(h, n, RATE, f[i], &m, &g);
		worst_mag = fmax(worst_mag, rel(mag[i], m));
		if (m > 1e-3 * mag[0])
			worst_gd = fmax(worst_gd, fabs(gd[i] - g) / n);
		worst_move = fmax(worst_move, fabs(f[i] - f0[i]));
		n_moved += f[i] != f0[i];
	}
	printf("  %u taps: %s, |H| within %.2g, group delay within %.2g of the length, frequencies moved by "
	       "%.4f Hz at most\n",
	       n, moved ? "FFT" : "direct", worst_mag, worst_gd, worst_move);
	CHECK(worst_mag < 1e-9 && worst_gd < 1e-9);
	if (moved) {
		uint32_t size = 1;
		while (size < 8u * n && size < (1u << 21))
			size <<= 1;
		CHECK(worst_move <= RATE / size / 2.0 * (1.0 + 1e-9) && n_moved > 0);
	} else {
		CHECK(n_moved == 0);
	}
	free(h);
}

static void megatap_cost(void)
{
	uint32_t n = 1u << 20;
	float *h = malloc(n * sizeof(float));
	double f[NF], mag[NF], gd[NF];
	CHECK(h);
	gf_test_fill_decaying_taps(h, n, &rng);
	log_freqs(f);
	int64_t t0 = gf_now_ns();
	CHECK_OK(gf_response_curve(h, n, RATE, f, NF, mag, gd));
	printf("  %u taps: the curve in %.3f s (400 direct points would pass over the taps 400 times)\n", n,
	       (gf_now_ns() - t0) / 1e9);
	CHECK(isfinite(mag[NF / 2]));
	free(h);
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

static void svg_case(void)
{
	enum { CH = 4, TAPS = 301 };
	float *h = malloc(CH * TAPS * sizeof(float));
	CHECK(h);
	for (int c = 0; c < CH - 1; c++)
		gf_test_fill_decaying_taps(h + c * TAPS, TAPS, &rng);
	memcpy(h + 3 * TAPS, h + 1 * TAPS, TAPS * sizeof(float)); /* path 3 is path 1 */
	struct gf_plot_taps t = {h, CH, TAPS, (uint32_t)RATE, "path", NULL};
	const char *title = "a <mixer> & its paths";
	size_t len = 0;
	int err = -1;
	char *s = gf_response_svg_string(&t, title, &len, &err);
	CHECK(s && err == 0 && len == strlen(s));
	char *file_text = NULL;
	size_t file_len = 0;
	FILE *o = open_memstream(&file_text, &file_len);
	CHECK(o);
	CHECK_OK(gf_response_svg(o, &t, title));
	CHECK(fclose(o) == 0);
	CHECK(file_len == len && memcmp(file_text, s, len) == 0);
	CHECK(strncmp(s, "<?xml", 5) == 0 && strstr(s, "</svg>\n"));
	CHECK(strstr(s, "a &lt;mixer&gt; &amp; its paths") && !strstr(s, "<mixer>"));
	CHECK(count(s, ">path ") == CH && count(s, ">channel ") == 0);
	CHECK(count(s, "class=\"panel\"") == 3);
	CHECK(count(s, "data-channel=\"2\"") >= 3); /* magnitude, group delay, impulse */
	CHECK(count(s, ">path 3 = path 1</text>") == 1 && count(s, " = path ") == 1);
	CHECK(count(s, "data-channel=\"3\" stroke=\"#ff7f0e\" stroke-dasharray=") >= 3);
	CHECK(count(s, "stroke-dasharray") == count(s, "data-channel=\"3\"") + 1); /* and its legend */
	char t1[200], t2[200];
	gf_response_svg_title(t1, sizeof(t1), "/etc/gpufir/room.conf", &t);
	struct gf_plot_taps one = {h, 1, TAPS, 44100, NULL, NULL};
	gf_response_svg_title(t2, sizeof(t2), NULL, &one);
	printf("  titles: \"%s\", \"%s\"\n", t1, t2);
	CHECK(strcmp(t1, "room.conf: 48000 Hz, 4 paths, 301 taps") == 0);
	CHECK(strcmp(t2, "built-in default: 44100 Hz, 1 channel, 301 taps") == 0);
	printf("  SVG of %d paths: %zu bytes, the same as a string and as a file\n", CH, len);
	free(file_text);
	free(s);
	free(h);
}

/* 3 inputs, 4 outputs: out 0 = a + b, out 1 = b + a (the same sum), out 2 = -a, out 3 no path. */
static void view_case(void)
{
	const float a[3] = {0.5f, -0.25f, 0.0f}, b[3] = {0.25f, 0.5f, 0.125f};
	float c[4][3];
	memcpy(c[0], a, sizeof(a)), memcpy(c[1], b, sizeof(b)), memcpy(c[2], b, sizeof(b));
	memcpy(c[3], a, sizeof(a));
	const uint32_t out[5] = {0, 0, 1, 1, 2};
	float all[5][3];
	memcpy(all, c, sizeof(c));
	for (int k = 0; k < 3; k++)
		all[4][k] = -a[k];
	struct gf_response_view v;
	CHECK_OK(gf_response_view_new(&v, &all[0][0], 5, 3, out, 4));
	CHECK(v.n_distinct == 2 && v.of_output[0] == 0 && v.of_output[1] == 0 && v.of_output[2] == 1);
	CHECK(v.n_firs[0] == 2 && v.n_firs[1] == 2 && v.n_firs[2] == 1 && v.n_firs[3] == 0);
	for (int k = 0; k < 3; k++)
		CHECK(v.sums[k] == a[k] + b[k] && v.sums[3 + k] == -a[k] + 0.0f);
	CHECK(v.abs_sum[0] == 1.625 && v.abs_sum[1] == 1.625 && v.abs_sum[2] == 0.75 && v.abs_sum[3] == 0.0);
	struct gf_response_view_plot p;
	CHECK_OK(gf_response_view_plot(&v, 48000, "/etc/m.conf", &p));
	printf("view: %u distinct; labels \"%s\", \"%s\"; title \"%s\"\n", v.n_distinct, p.labels[0],
	       p.labels[1], p.title);
	CHECK(p.t.channels == 2 && !strcmp(p.labels[0], "outputs 0 (+1)") &&
	      !strcmp(p.labels[1], "output 2"));
	CHECK(!strcmp(p.title,
		      "m.conf: 48000 Hz, mixer of 5 paths, 3 taps; per output, the sum of its paths: "
		      "2 distinct"));
	gf_response_view_plot_free(&p);
	gf_response_view_free(&v);
	const uint32_t bad[5] = {0, 0, 1, 1, 4};
	CHECK(gf_response_view_new(&v, &all[0][0], 5, 3, bad, 4) == GF_E_INVAL);

	/* 40 outputs of distinct sums: 16 drawn, and the title says so */
	enum { O = 40 };
	float h[O];
	uint32_t o40[O];
	for (uint32_t i = 0; i < O; i++)
		h[i] = (float)(i + 1), o40[i] = i;
	CHECK_OK(gf_response_view_new(&v, h, O, 1, o40, O));
	CHECK_OK(gf_response_view_plot(&v, 48000, NULL, &p));
	CHECK(v.n_distinct == O && p.t.channels == GF_RESPONSE_VIEW_PLOT_MAX);
	CHECK(strstr(p.title, "40 distinct, the first 16 drawn"));
	gf_response_view_plot_free(&p);
	gf_response_view_free(&v);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	rng = gf_test_seed("test_response_svg");
	curve_case(255, 0);
	curve_case(8000, 0);
	curve_case(65535, 1);
	curve_case(300001, 1);
	megatap_cost();
	svg_case();
	view_case();
	puts("test_response_svg: OK");
	return 0;
}
