/*
 * The DeepFilterNet3 tests' fixture: the reference runtime through dlopen(),
 * the converted model, and fixed inputs.
 */
#include "test_dfn_inputs.h"

#include <dlfcn.h>
#include <math.h>
#include <sndfile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sndutil.h"
#include "testutil.h"

#define HOP 480

const struct dfn_test_setting dfn_test_settings[DFN_TEST_SETTINGS] = {
	{100.0f, 0.0f}, {12.0f, 0.0f}, {100.0f, 0.02f}};

void dfn_test_params(int i, struct dfn_params *p)
{
	dfn_params_default(p);
	p->atten_lim_db = dfn_test_settings[i].lim_db;
	p->post_filter_beta = dfn_test_settings[i].beta;
}

const char *dfn_test_dir(void)
{
	static char buf[4096];
	const char *d = getenv("GPUFIR_DEEPFILTER_DIR");
	if (d && *d)
		return d;
	const char *b = getenv("GPUFIR_BINARY_DIR");
	snprintf(buf, sizeof buf, "%s/deepfilter", b ? b : ".");
	return buf;
}

/* DIR/@p file into @p out (4096 bytes). */
static void in_dir(char *out, const char *file)
{
	int n = snprintf(out, 4096, "%s/%s", dfn_test_dir(), file);
	CHECK(n > 0 && n < 4096);
}

struct dfn_model *dfn_test_model(void)
{
	char path[4096];
	const char *p = getenv("GPUFIR_DFN_MODEL");
	if (!p || !*p) {
		in_dir(path, "DeepFilterNet3.dfn");
		p = path;
	}
	if (access(p, R_OK) != 0) {
		printf("skipped: no converted model at %s (scripts/install-deepfilter.sh, then "
		       "scripts/dfn-convert.py DIR/DeepFilterNet3_onnx.tar.gz %s)\n",
		       p, p);
		exit(GF_TEST_SKIP);
	}
	struct dfn_model *m = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(dfn_model_load(p, &m, &eb), &eb);
	return m;
}

/* Noise with a spectrum falling 6 dB an octave (a one-pole low-pass of white), bursts like talkers. */
static void babble(float *x, size_t n, float level, uint64_t *rng)
{
	float lp = 0.0f;
	for (size_t i = 0; i < n; i++) {
		lp = 0.97f * lp + 0.03f * gf_test_randf(rng);
		float env = 0.6f + 0.4f * sinf(2.0f * (float)M_PI * 3.1f * i / 48000.0f) *
					   sinf(2.0f * (float)M_PI * 0.7f * i / 48000.0f);
		x[i] = level * 8.0f * lp * env;
	}
}

float *dfn_test_inputs(int *channels, size_t *hops)
{
	char path[4096];
	const char *src = getenv("GPUFIR_SOURCE_DIR");
	snprintf(path, sizeof path, "%s/samples/noisy_speech.wav", src ? src : ".");
	SF_INFO info;
	float *speech = gf_test_read_sound(path, &info, 1);
	CHECK(speech && info.channels == 1 && info.samplerate == 48000);
	size_t h = (size_t)info.frames / HOP, n = h * HOP;
	float *x = calloc(3 * n, sizeof *x);
	CHECK(x);
	uint64_t rng = 0x5eed0042u;
	memcpy(x, speech, n * sizeof *x);
	babble(x + n, n, 0.1f, &rng);
	for (size_t i = 0; i < n; i++)
		x[n + i] += speech[i];
	babble(x + 2 * n, n, 0.05f, &rng);
	for (size_t i = 0; i < n; i++)
		x[2 * n + i] += 0.05f * sinf(2.0f * (float)M_PI * 997.0f * i / 48000.0f);
	free(speech);
	*channels = 3;
	*hops = h;
	return x;
}

void dfn_test_open(struct dfn_test_case *t)
{
	t->m = dfn_test_model();
	t->x = dfn_test_inputs(&t->ch, &t->hops);
}

void dfn_test_close(struct dfn_test_case *t)
{
	free(t->x);
	dfn_model_free(t->m);
}

typedef void *(*df_create_fn)(const char *, float, const char *);
typedef size_t (*df_len_fn)(void *);
typedef float (*df_frame_fn)(void *, float *, float *);
typedef void (*df_free_fn)(void *);
typedef void (*df_beta_fn)(void *, float);

void dfn_test_reference(const float *in, size_t hops, float atten_lim_db, float pf_beta, float *out)
{
	char lib[4096], model[4096];
	in_dir(lib, "libdeepfilter.so");
	in_dir(model, "DeepFilterNet3_onnx.tar.gz");
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h || access(model, R_OK) != 0) {
		printf("skipped: no reference runtime (%s, %s): run scripts/install-deepfilter.sh\n", lib,
		       model);
		exit(GF_TEST_SKIP);
	}
	df_create_fn create = (df_create_fn)dlsym(h, "df_create");
	df_len_fn len = (df_len_fn)dlsym(h, "df_get_frame_length");
	df_frame_fn frame = (df_frame_fn)dlsym(h, "df_process_frame");
	df_free_fn dfree = (df_free_fn)dlsym(h, "df_free");
	df_beta_fn beta = (df_beta_fn)dlsym(h, "df_set_post_filter_beta");
	CHECK(create && len && frame && dfree && beta);
	void *st = create(model, atten_lim_db, NULL);
	CHECK(st && len(st) == HOP);
	beta(st, pf_beta);
	float buf[HOP];
	for (size_t i = 0; i < hops; i++) {
		memcpy(buf, in + i * HOP, sizeof buf);
		frame(st, buf, out + i * HOP);
	}
	dfree(st);
	/* the runtime stays loaded: unloading a Rust library with thread-locals is not safe */
}

void dfn_test_diff(const float *want, const float *got, size_t n, double *max_abs, double *snr_db)
{
	double e = 0.0, s = 0.0, mx = 0.0;
	for (size_t i = 0; i < n; i++) {
		double d = (double)got[i] - want[i];
		e += d * d;
		s += (double)want[i] * want[i];
		mx = fabs(d) > mx ? fabs(d) : mx;
	}
	*max_abs = mx;
	*snr_db = e > 0.0 ? 10.0 * log10(s / e) : INFINITY;
}
