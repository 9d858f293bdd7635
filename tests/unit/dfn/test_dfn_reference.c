/*
 * gpufir's DeepFilterNet3 forward on the CPU against libdeepfilter, the
 * reference runtime, on fixed inputs (noisy speech, speech in loud noise,
 * noise alone): all three channels in one batch, each compared with the
 * reference run on that channel alone. The tolerance is docs/neural.md's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dfn.h"
#include "test_dfn_inputs.h"
#include "testutil.h"

#define HOP 480
/* docs/neural.md, "Accuracy": the difference at least this far below the reference's output ... */
#define MIN_SNR_DB 90.0
/* ... and no sample off by more than this (full scale 1). */
#define MAX_ABS 1e-5

static void run_ours(const struct dfn_model *m, const float *x, int ch, size_t hops, int setting, float *y)
{
	struct dfn_params p;
	struct dfn_cpu *d = NULL;
	struct gf_errbuf eb = {{0}};
	dfn_test_params(setting, &p);
	CHECK_OK_EB(dfn_cpu_new(m, ch, &p, &d, &eb), &eb);
	float *in = malloc((size_t)ch * HOP * sizeof *in), *out = malloc((size_t)ch * HOP * sizeof *out);
	CHECK(in && out);
	for (size_t h = 0; h < hops; h++) {
		for (int c = 0; c < ch; c++)
			memcpy(in + (size_t)c * HOP, x + (c * hops + h) * HOP, HOP * sizeof *in);
		dfn_cpu_process(d, in, out, NULL);
		for (int c = 0; c < ch; c++)
			memcpy(y + (c * hops + h) * HOP, out + (size_t)c * HOP, HOP * sizeof *out);
	}
	free(in);
	free(out);
	dfn_cpu_free(d);
}

/* The reference must denoise: the noise-only input (2) comes out at least 10 dB lower. */
static int denoised(const float *x, const float *ref, size_t n)
{
	double ex = 0.0, ey = 0.0;
	for (size_t i = 0; i < n; i++) {
		ex += (double)x[i] * x[i];
		ey += (double)ref[i] * ref[i];
	}
	printf("noise alone: %.1f dB through the reference\n", 10.0 * log10(ey / ex));
	return ey < ex / 10.0;
}

static int compare(const float *x, int ch, size_t hops, const float *y, struct dfn_test_setting st)
{
	int bad = 0;
	float *ref = malloc(hops * HOP * sizeof *ref);
	CHECK(ref);
	for (int c = 0; c < ch; c++) {
		double mx, snr;
		dfn_test_reference(x + c * hops * HOP, hops, st.lim_db, st.beta, ref);
		if (c == 2 && st.lim_db >= 100.0f)
			CHECK(denoised(x + c * hops * HOP, ref, hops * HOP));
		dfn_test_diff(ref, y + c * hops * HOP, hops * HOP, &mx, &snr);
		int ok = snr >= MIN_SNR_DB && mx <= MAX_ABS;
		printf("atten_lim %g dB, post-filter %g, input %d: max |diff| %.3g, SNR of the difference "
		       "%.1f dB: "
		       "%s\n",
		       (double)st.lim_db, (double)st.beta, c, mx, snr, ok ? "ok" : "FAIL");
		bad |= !ok;
	}
	free(ref);
	return bad;
}

int main(void)
{
	struct dfn_test_case t;
	dfn_test_open(&t);
	float *y = malloc((size_t)t.ch * t.hops * HOP * sizeof *y);
	CHECK(y);
	int bad = 0;
	for (int i = 0; i < DFN_TEST_SETTINGS; i++) {
		run_ours(t.m, t.x, t.ch, t.hops, i, y);
		bad |= compare(t.x, t.ch, t.hops, y, dfn_test_settings[i]);
	}
	free(y);
	dfn_test_close(&t);
	return bad;
}
