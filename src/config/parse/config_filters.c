/*
 * The config's filters = ( ... ) list: inline coefficients, text and sound
 * files, and designs, each checked (types, ranges, files exist) and kept with
 * its source lines for build-time messages.
 */
#include "config_parse.h"

#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_priv.h"
#include "denoise.h"
#include "hum.h"
#include "neural.h"
#include "safe_file.h"
#include "suppress.h"

const char *const gf_config_fkey_names[K_COUNT] = {
	"name",
	"coeffs",
	"file",
	"format",
	"channel",
	"offset",
	"length",
	"design",
	"gain_db",
	"cutoff_hz",
	"low_hz",
	"high_hz",
	"taps",
	"transition_hz",
	"attenuation_db",
	"freq_hz",
	"harmonics",
	"bandwidth_hz",
	"q",
	"delay_ms",
	"phase",
	"noise",
	"reduction_db",
	"use_input",
	"bands",
	"preamp_db",
	"highpass_hz",
	"resample",
	"model",
	"atten_lim_db",
	"post_filter_beta",
	"bypass",
	"runtime",
};

#define BIT(k) (UINT64_C(1) << (k)) /* K_COUNT is past 32 */
#define SINC_KEYS (BIT(K_TAPS) | BIT(K_TRANSITION_HZ) | BIT(K_ATTENUATION_DB))

static uint64_t allowed_keys(const struct gf_config_filter *f)
{
	/* not an FIR: no gain or phase of its own */
	if (f->kind == FK_DESIGN && f->design.type == GF_DESIGN_SUPPRESS)
		return BIT(K_NAME) | BIT(K_DESIGN) | BIT(K_NOISE) | BIT(K_REDUCTION_DB) | BIT(K_HIGHPASS_HZ) |
		       BIT(K_BYPASS);
	if (f->kind == FK_DESIGN && f->design.type == GF_DESIGN_DEEPFILTER)
		return BIT(K_NAME) | BIT(K_DESIGN) | BIT(K_MODEL) | BIT(K_ATTEN_LIM_DB) |
		       BIT(K_POST_FILTER_BETA) | BIT(K_BYPASS) | BIT(K_RUNTIME);
	uint64_t m = BIT(K_NAME) | BIT(K_GAIN_DB) | BIT(K_PHASE);
	switch (f->kind) {
	case FK_INLINE:
		return m | BIT(K_COEFFS);
	case FK_TEXT:
		return m | BIT(K_FILE) | BIT(K_FORMAT);
	case FK_WAV:
		return m | BIT(K_FILE) | BIT(K_FORMAT) | BIT(K_CHANNEL) | BIT(K_OFFSET) | BIT(K_LENGTH) |
		       BIT(K_RESAMPLE);
	case FK_RAW:
		return m | BIT(K_FILE) | BIT(K_FORMAT) | BIT(K_OFFSET) | BIT(K_LENGTH);
	case FK_DESIGN:
		break;
	}
	m |= BIT(K_DESIGN);
	switch (f->design.type) {
	case GF_DESIGN_LOWPASS:
	case GF_DESIGN_HIGHPASS:
		return m | BIT(K_CUTOFF_HZ) | SINC_KEYS;
	case GF_DESIGN_BANDPASS:
	case GF_DESIGN_BANDSTOP:
		return m | BIT(K_LOW_HZ) | BIT(K_HIGH_HZ) | SINC_KEYS;
	case GF_DESIGN_NOTCH:
		return m | BIT(K_FREQ_HZ) | BIT(K_HARMONICS) | BIT(K_BANDWIDTH_HZ) | BIT(K_Q) | BIT(K_TAPS) |
		       BIT(K_ATTENUATION_DB);
	case GF_DESIGN_DELAY:
		return m | BIT(K_DELAY_MS);
	case GF_DESIGN_DENOISE:
		return m | BIT(K_NOISE) | BIT(K_REDUCTION_DB) | BIT(K_USE_INPUT) | BIT(K_TAPS);
	case GF_DESIGN_PEQ:
		return m | BIT(K_BANDS) | BIT(K_PREAMP_DB) | BIT(K_FILE) | BIT(K_TAPS);
	case GF_DESIGN_IDENTITY:
	case GF_DESIGN_SUPPRESS:
	case GF_DESIGN_DEEPFILTER:
		break;
	}
	return m;
}

/* Record key lines; warn about settings that this kind of filter does not use. */
static void note_keys(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		      struct gf_config_filter *f)
{
	uint64_t allowed = allowed_keys(f);
	const char *what = f->kind == FK_DESIGN	  ? gf_design_type_name(f->design.type)
			   : f->kind == FK_INLINE ? "coeffs"
			   : f->kind == FK_TEXT	  ? "text file"
			   : f->kind == FK_RAW	  ? "raw sample file"
						  : "sound file";
	int n = config_setting_length(g);
	for (int i = 0; i < n; i++) {
		const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
		const char *name = config_setting_name(s);
		int k = 0;
		while (k < K_COUNT && strcmp(name, gf_config_fkey_names[k]) != 0)
			k++;
		if (k == K_COUNT)
			gf_warn("%s:%d: %s%s: unknown setting, ignored", gf_cfg_src_of(L, s),
				gf_cfg_line_of(s), prefix, name);
		else if (!(allowed & BIT(k)))
			gf_warn("%s:%d: %s%s: not used by a %s filter, ignored", gf_cfg_src_of(L, s),
				gf_cfg_line_of(s), prefix, name, what);
		else
			f->key_line[k] = gf_cfg_line_of(s);
	}
}

static int parse_coeffs(const struct gf_cfg_loader *L, const config_setting_t *a, const char *prefix,
			struct gf_config_filter *f)
{
	char name[192];
	gf_cfg_setting(name, sizeof(name), prefix, "coeffs");
	int t = config_setting_type(a);
	if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST)
		return gf_cfg_fail_at(L, a, name, "must be an array of numbers [...], not %s",
				      gf_cfg_type_name(a));
	int n = config_setting_length(a);
	if (n < 1)
		return gf_cfg_fail_at(L, a, name, "is empty: give at least one coefficient");
	if (!(f->coeffs = malloc((size_t)n * sizeof(double))))
		return GF_E_NOMEM;
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(a, (unsigned)i);
		double x;
		if (gf_cfg_number_of(e, &x))
			return gf_cfg_fail_at(L, e, name, "element %d must be a number, not %s", i,
					      gf_cfg_type_name(e));
		if (!isfinite(x))
			return gf_cfg_fail_at(L, e, name, "element %d is not finite (%g)", i, x);
		f->coeffs[i] = x;
	}
	f->n_coeffs = (uint32_t)n;
	return 0;
}

/* A positive frequency-like number; 0 if absent. */
static int get_pos(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		   const char *key, double hi, double *v)
{
	int r = gf_cfg_get_num(L, g, prefix, key, -INFINITY, hi, v);
	if (r == 1 && !(*v > 0.0)) {
		char name[192];
		gf_cfg_setting(name, sizeof(name), prefix, key);
		return gf_cfg_fail_at(L, config_setting_get_member(g, key), name, "must be above 0 (got %g)",
				      *v);
	}
	return r;
}

/* freq_hz = 50.0; or freq_hz = [50.0, 60.0]; */
static int get_freqs(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		     struct gf_design *d)
{
	const config_setting_t *s = config_setting_get_member(g, "freq_hz");
	if (!s)
		return 0;
	char name[192];
	gf_cfg_setting(name, sizeof(name), prefix, "freq_hz");
	int t = config_setting_type(s);
	if (t == CONFIG_TYPE_STRING) {
		if (strcmp(config_setting_get_string(s), "auto") != 0)
			return gf_cfg_fail_at(
				L, s, name, "must be a number, an array of numbers or \"auto\" (got \"%s\")",
				config_setting_get_string(s));
		d->freq_auto = 1;
		return 1;
	}
	if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
		d->n_freq = 1;
		return get_pos(L, g, prefix, "freq_hz", 1e6, &d->freq_hz[0]);
	}
	int n = config_setting_length(s);
	if (n < 1 || n > GF_DESIGN_MAX_FREQS)
		return gf_cfg_fail_at(L, s, name, "give 1..%d frequencies (got %d)", GF_DESIGN_MAX_FREQS, n);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		double x;
		if (gf_cfg_number_of(e, &x))
			return gf_cfg_fail_at(L, e, name, "element %d must be a number, not %s", i,
					      gf_cfg_type_name(e));
		if (!(x > 0.0 && x <= 1e6))
			return gf_cfg_fail_at(L, e, name, "element %d must be above 0 Hz (got %g)", i, x);
		d->freq_hz[i] = x;
	}
	d->n_freq = (uint32_t)n;
	return 1;
}

/* The settings design type @p t requires, and how they must relate. */
static int check_design(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
			const struct gf_config_filter *f, enum gf_design_type t)
{
	const struct gf_design *d = &f->design;
	switch (t) {
	case GF_DESIGN_LOWPASS:
	case GF_DESIGN_HIGHPASS:
		if (d->cutoff_hz == 0.0)
			return gf_cfg_missing(L, g, prefix, "cutoff_hz", "the -6 dB frequency in Hz");
		break;
	case GF_DESIGN_BANDPASS:
	case GF_DESIGN_BANDSTOP:
		if (d->low_hz == 0.0)
			return gf_cfg_missing(L, g, prefix, "low_hz", "the lower band edge in Hz");
		if (d->high_hz == 0.0)
			return gf_cfg_missing(L, g, prefix, "high_hz", "the upper band edge in Hz");
		if (!(d->low_hz < d->high_hz)) {
			char name[192];
			gf_cfg_setting(name, sizeof(name), prefix, "high_hz");
			return gf_cfg_fail_at(L, config_setting_get_member(g, "high_hz"), name,
					      "must be above low_hz (%g <= %g)", d->high_hz, d->low_hz);
		}
		break;
	case GF_DESIGN_NOTCH:
		if (d->n_freq == 0 && !d->freq_auto)
			return gf_cfg_missing(L, g, prefix, "freq_hz",
					      "the hum frequency, e.g. 50.0 or [50.0, 60.0]");
		if ((d->taps != 0) + (d->bandwidth_hz != 0.0) + (d->q != 0.0) != 1) {
			char grp[160];
			snprintf(grp, sizeof(grp), "filters.%s", f->name);
			return gf_cfg_fail_at(L, g, grp,
					      "a notch needs exactly one of taps, bandwidth_hz, q");
		}
		for (uint32_t i = 0; i < d->n_freq; i++) {
			if (d->bandwidth_hz != 0.0 && !(d->bandwidth_hz < d->freq_hz[i])) {
				char name[192];
				gf_cfg_setting(name, sizeof(name), prefix, "bandwidth_hz");
				return gf_cfg_fail_at(L, config_setting_get_member(g, "bandwidth_hz"), name,
						      "must be below freq_hz (%g Hz)", d->freq_hz[i]);
			}
		}
		return 0;
	case GF_DESIGN_DELAY:
		if (!config_setting_get_member(g, "delay_ms"))
			return gf_cfg_missing(L, g, prefix, "delay_ms", "the delay in milliseconds");
		return 0;
	case GF_DESIGN_IDENTITY:
	case GF_DESIGN_SUPPRESS:   /* noise is optional: without one the estimate starts from the input */
	case GF_DESIGN_PEQ:	   /* bands or file: gf_cfg_parse_peq */
	case GF_DESIGN_DEEPFILTER: /* model defaults to the installed one: parse_deepfilter */
		return 0;
	case GF_DESIGN_DENOISE:
		if (!f->file)
			return gf_cfg_missing(
				L, g, prefix, "noise",
				"a recording of the noise alone, e.g. noise = \"room-noise.wav\"");
		return 0;
	}
	if (!d->taps && d->transition_hz == 0.0)
		return gf_cfg_missing(L, g, prefix, "taps", "give taps (odd) or transition_hz");
	return 0;
}

/* @p key = "FILE" (a noise sample, a model): must be readable now; watched for reload. */
static int parse_file_key(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
			  const char *key, const char *what, struct gf_config_filter *f)
{
	char *rel = NULL;
	int r = gf_cfg_get_str(L, g, prefix, key, &rel);
	if (r <= 0)
		return r;
	f->file = gf_cfg_join_path(L->base_dir, rel);
	free(rel);
	if (!f->file)
		return GF_E_NOMEM;
	struct gf_errbuf why; /* readable and a regular file, checked without blocking on a FIFO */
	int fd = gf_file_open_read(f->file, what, 0, &why);
	if (fd < 0) {
		char name[192];
		gf_cfg_setting(name, sizeof(name), prefix, key);
		return gf_cfg_fail_at(L, config_setting_get_member(g, key), name, "%s", why.msg);
	}
	struct stat st;
	if (fstat(fd, &st) == 0) {
		f->noise_size = (int64_t)st.st_size;
		f->noise_mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	}
	close(fd);
	return gf_cfg_add_file(L->c, f->file);
}

static int parse_noise_file(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
			    struct gf_config_filter *f)
{
	return parse_file_key(L, g, prefix, "noise", "noise file", f);
}

/* runtime = "engine" (gpufir's own inference: the default, 0) or "reference" (libdeepfilter, 1). */
static int parse_neural_runtime(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
				struct gf_design *d)
{
	char *v = NULL;
	int r = gf_cfg_get_str(L, g, prefix, "runtime", &v);
	if (r <= 0)
		return r;
	r = 0;
	if (!strcmp(v, "reference"))
		d->neural_reference = 1;
	else if (strcmp(v, "engine") != 0)
		r = gf_cfg_fail_key(L, g, prefix, "runtime",
				    "must be \"engine\" (gpufir's own inference) or \"reference\" "
				    "(libdeepfilter) (got \"%s\")",
				    v);
	free(v);
	return r;
}

/* runtime = "engine" on a model = tarball: it loads the tarball's conversion, GF_NEURAL_DFN_FILE
 * beside it (scripts/install-deepfilter.sh makes it), which must be readable now; a model that is
 * a .dfn already is loaded as it is. */
static int engine_model_beside(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
			       struct gf_config_filter *f)
{
	size_t n = strlen(f->file);
	if (n > 4 && !strcmp(f->file + n - 4, ".dfn"))
		return 0;
	char *dir = gf_cfg_dir_of(f->file);
	char *dfn = dir ? gf_cfg_join_path(dir, GF_NEURAL_DFN_FILE) : NULL;
	free(dir);
	if (!dfn)
		return GF_E_NOMEM;
	struct gf_errbuf why;
	int fd = gf_file_open_read(dfn, "model file", 0, &why);
	if (fd < 0) {
		int r = gf_cfg_fail_key(L, g, prefix, "model",
					"runtime \"engine\" loads the converted model beside %s: %s (make it "
					"with scripts/install-deepfilter.sh, or set runtime = \"reference\")",
					f->file, why.msg);
		free(dfn);
		return r;
	}
	close(fd);
	free(f->file);
	f->file = dfn;
	return gf_cfg_add_file(L->c, f->file);
}

/* No model = "...": the one scripts/install-deepfilter.sh installed for the runtime chosen. */
static int default_model(const struct gf_cfg_loader *L, const config_setting_t *g, struct gf_config_filter *f)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", gf_neural_default_dir(),
		 f->design.neural_reference ? GF_NEURAL_TARBALL_FILE : GF_NEURAL_DFN_FILE);
	struct gf_errbuf why;
	int fd = gf_file_open_read(path, "model file", 0, &why);
	if (fd < 0) {
		char grp[160];
		snprintf(grp, sizeof(grp), "filters.%s", f->name);
		return gf_cfg_fail_at(L, g, grp,
				      "no model = \"...\" given, and the default DeepFilterNet3 model is not "
				      "installed (%s; install it with scripts/install-deepfilter.sh)",
				      why.msg);
	}
	close(fd);
	return (f->file = strdup(path)) ? gf_cfg_add_file(L->c, f->file) : GF_E_NOMEM;
}

/* deepfilter: runtime, model (default: the one scripts/install-deepfilter.sh installed),
 * atten_lim_db, post_filter_beta, bypass. */
static int parse_deepfilter(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
			    struct gf_config_filter *f)
{
	struct gf_design *d = &f->design;
	d->atten_lim_db = GF_NEURAL_MAX_ATTEN_LIM_DB;
	int r = gf_cfg_get_num(L, g, prefix, "atten_lim_db", GF_CONFIG_MIN_ATTEN_LIM_DB,
			       GF_NEURAL_MAX_ATTEN_LIM_DB, &d->atten_lim_db);
	if (r >= 0)
		r = gf_cfg_get_num(L, g, prefix, "post_filter_beta", 0.0, GF_NEURAL_MAX_POST_FILTER_BETA,
				   &d->post_filter_beta);
	if (r >= 0)
		r = gf_cfg_get_bool(L, g, prefix, "bypass", &f->bypass);
	if (r >= 0)
		r = parse_neural_runtime(L, g, prefix, d);
	if (r < 0)
		return r;
	if (!config_setting_get_member(g, "model"))
		return default_model(L, g, f);
	if ((r = parse_file_key(L, g, prefix, "model", "model file", f)) < 0 || d->neural_reference)
		return r;
	return engine_model_beside(L, g, prefix, f);
}

/* denoise: noise (required: check_design), reduction_db, use_input. */
static int parse_noise(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		       struct gf_config_filter *f)
{
	f->design.reduction_db = GF_DENOISE_DEFAULT_REDUCTION_DB;
	int r = gf_cfg_get_num(L, g, prefix, "reduction_db", 0.0, GF_DENOISE_MAX_REDUCTION_DB,
			       &f->design.reduction_db);
	f->design.use_input = 1;
	if (r >= 0)
		r = gf_cfg_get_bool(L, g, prefix, "use_input", &f->design.use_input);
	return r < 0 ? r : parse_noise_file(L, g, prefix, f);
}

/* suppress: highpass_hz, 0 (off) or GF_SUPPRESS_MIN_HIGHPASS_HZ..GF_SUPPRESS_MAX_HIGHPASS_HZ. */
static int parse_highpass(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
			  struct gf_config_filter *f)
{
	double *hz = &f->design.highpass_hz;
	int r = gf_cfg_get_num(L, g, prefix, "highpass_hz", 0.0, GF_SUPPRESS_MAX_HIGHPASS_HZ, hz);
	if (r <= 0 || *hz == 0.0 || *hz >= GF_SUPPRESS_MIN_HIGHPASS_HZ)
		return r;
	char name[192];
	gf_cfg_setting(name, sizeof(name), prefix, "highpass_hz");
	return gf_cfg_fail_at(L, config_setting_get_member(g, "highpass_hz"), name,
			      "must be 0 (off) or %g..%g Hz (got %g): the suppressor's bins are about 42 Hz "
			      "apart, and no cutoff lies below half of that",
			      GF_SUPPRESS_MIN_HIGHPASS_HZ, GF_SUPPRESS_MAX_HIGHPASS_HZ, *hz);
}

/* suppress: reduction_db and bypass (both live: config_suppress.c), highpass_hz, and an optional
 * noise sample that seeds its estimate. */
static int parse_suppress(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
			  struct gf_config_filter *f)
{
	f->design.reduction_db = GF_SUPPRESS_DEFAULT_REDUCTION_DB;
	int r = gf_cfg_get_num(L, g, prefix, "reduction_db", GF_CONFIG_MIN_REDUCTION_DB,
			       GF_SUPPRESS_MAX_REDUCTION_DB, &f->design.reduction_db);
	if (r >= 0)
		r = gf_cfg_get_bool(L, g, prefix, "bypass", &f->bypass);
	if (r >= 0)
		r = parse_highpass(L, g, prefix, f);
	return r < 0 ? r : parse_noise_file(L, g, prefix, f);
}

static int parse_design(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
			struct gf_config_filter *f)
{
	struct gf_design *d = &f->design;
	char *type = NULL;
	int r = gf_cfg_get_str(L, g, prefix, "design", &type);
	if (r < 0)
		return r;
	enum gf_design_type t;
	if (gf_design_parse_type(type, &t)) {
		r = gf_cfg_fail_key(
			L, g, prefix, "design",
			"unknown design \"%s\" (lowpass, highpass, bandpass, bandstop, notch, identity, "
			"delay, denoise, suppress, peq, deepfilter)",
			type);
		free(type);
		return r;
	}
	free(type);
	gf_design_init(d, t);
	long long taps = 0, harm = 1;
	const double fmax = 1e6;
	if ((r = get_pos(L, g, prefix, "cutoff_hz", fmax, &d->cutoff_hz)) < 0 ||
	    (r = get_pos(L, g, prefix, "low_hz", fmax, &d->low_hz)) < 0 ||
	    (r = get_pos(L, g, prefix, "high_hz", fmax, &d->high_hz)) < 0 ||
	    (r = get_pos(L, g, prefix, "transition_hz", fmax, &d->transition_hz)) < 0 ||
	    (r = get_freqs(L, g, prefix, d)) < 0 ||
	    (r = get_pos(L, g, prefix, "bandwidth_hz", fmax, &d->bandwidth_hz)) < 0 ||
	    (r = gf_cfg_get_num(L, g, prefix, "q", 1.0, 10000.0, &d->q)) < 0 ||
	    (r = gf_cfg_get_num(L, g, prefix, "attenuation_db", 20.0, 200.0, &d->attenuation_db)) < 0 ||
	    (r = gf_cfg_get_num(L, g, prefix, "delay_ms", 0.0, 10000.0, &d->delay_ms)) < 0 ||
	    (r = gf_cfg_get_int(L, g, prefix, "taps", 1, GF_DESIGN_MAX_TAPS, &taps)) < 0 ||
	    (r = gf_cfg_get_int(L, g, prefix, "harmonics", 1, GF_DESIGN_MAX_NOTCHES, &harm)) < 0)
		return r;
	d->taps = (uint32_t)taps;
	d->harmonics = (uint32_t)harm;
	if (d->freq_auto && !config_setting_get_member(g, "harmonics"))
		d->harmonics = GF_HUM_DEFAULT_HARMONICS; /* the highest one looked for */
	if (t == GF_DESIGN_DENOISE && (r = parse_noise(L, g, prefix, f)) < 0)
		return r;
	if (t == GF_DESIGN_SUPPRESS && (r = parse_suppress(L, g, prefix, f)) < 0)
		return r;
	if (t == GF_DESIGN_DEEPFILTER && (r = parse_deepfilter(L, g, prefix, f)) < 0)
		return r;
	if (t == GF_DESIGN_PEQ && (r = gf_cfg_parse_peq(L, g, prefix, f)) < 0)
		return r;
	if (taps && !(taps & 1) && t != GF_DESIGN_IDENTITY && t != GF_DESIGN_DELAY &&
	    t != GF_DESIGN_SUPPRESS && t != GF_DESIGN_DEEPFILTER) {
		char name[192];
		gf_cfg_setting(name, sizeof(name), prefix, "taps");
		return gf_cfg_fail_at(L, config_setting_get_member(g, "taps"), name,
				      "must be odd for a linear-phase %s (got %lld)", gf_design_type_name(t),
				      taps);
	}
	return check_design(L, g, prefix, f, t);
}

/* format = "text" | "wav" | a raw format (CamillaDSP's names: "FLOAT64LE", "S24_3_LE", ...). */
static int parse_format(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
			const char *format, struct gf_config_filter *f)
{
	if (strcmp(format, "text") == 0) {
		f->kind = FK_TEXT;
		f->raw = GF_RAW_NONE;
	} else if (strcmp(format, "wav") == 0 || strcmp(format, "sound") == 0) {
		f->kind = FK_WAV;
		f->raw = GF_RAW_NONE;
	} else if ((f->raw = gf_taps_raw_parse(format))) {
		f->kind = FK_RAW;
	} else {
		char name[192];
		gf_cfg_setting(name, sizeof(name), prefix, "format");
		return gf_cfg_fail_at(L, config_setting_get_member(g, "format"), name,
				      "must be \"text\" or \"wav\", or a raw sample format: %s (got \"%s\")",
				      gf_taps_raw_names(), format);
	}
	return 0;
}

/* channel = N, or "route": each audio channel takes the file's channel of the same number. */
static int get_channel(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		       struct gf_config_filter *f, long long *ch)
{
	const config_setting_t *s = config_setting_get_member(g, "channel");
	if (!s || config_setting_type(s) != CONFIG_TYPE_STRING)
		return gf_cfg_get_int(L, g, prefix, "channel", 0, MAX_CHANNELS - 1, ch);
	char name[192];
	gf_cfg_setting(name, sizeof(name), prefix, "channel");
	if (strcmp(config_setting_get_string(s), "route") != 0)
		return gf_cfg_fail_at(L, s, name, "must be a channel number or \"route\" (got \"%s\")",
				      config_setting_get_string(s));
	if (f->kind != FK_WAV)
		return gf_cfg_fail_at(L, s, name, "\"route\" needs a multi-channel sound file");
	f->channel_is_route = 1;
	return 1;
}

static int parse_file_filter(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
			     struct gf_config_filter *f)
{
	char *rel = NULL, *format = NULL;
	const config_setting_t *fs = config_setting_get_member(g, "file");
	int r = config_setting_type(fs) == CONFIG_TYPE_LIST ? gf_cfg_parse_rate_files(L, fs, prefix, f, &rel)
							    : gf_cfg_get_str(L, g, prefix, "file", &rel);
	if (r >= 0)
		r = gf_cfg_get_str(L, g, prefix, "format", &format);
	if (r < 0)
		goto out;
	char name[192];
	gf_cfg_setting(name, sizeof(name), prefix, "file");
	f->kind = gf_taps_is_sound_file(rel) ? FK_WAV : FK_TEXT;
	if ((f->raw = gf_taps_raw_by_extension(rel)))
		f->kind = FK_RAW;
	if (format && (r = parse_format(L, g, prefix, format, f)) < 0)
		goto out;
	if (!f->n_by_rate && !(f->file = gf_cfg_join_path(L->base_dir, rel))) {
		r = GF_E_NOMEM;
		goto out;
	}
	/* with the rate token, which file is read is known at build time */
	int token = f->file && strstr(f->file, GF_RATE_TOKEN);
	if (f->file && !token) {
		/* readable and a regular file, checked without blocking on a FIFO */
		struct gf_errbuf why;
		int fd = gf_file_open_read(f->file, "filter file", 0, &why);
		if (fd < 0) {
			r = gf_cfg_fail_at(L, fs, name, "%s", why.msg);
			goto out;
		}
		close(fd);
	}
	long long ch = 0, off = 0, len = 0;
	if ((r = get_channel(L, g, prefix, f, &ch)) < 0 ||
	    (r = gf_cfg_get_int(L, g, prefix, "offset", 0, 1LL << 40, &off)) < 0 ||
	    (r = gf_cfg_get_int(L, g, prefix, "length", 1, GF_TAPS_MAX, &len)) < 0 ||
	    (f->kind == FK_WAV && (r = gf_cfg_get_bool(L, g, prefix, "resample", &f->resample)) < 0))
		goto out;
	f->sel.channel = f->kind == FK_WAV ? (uint32_t)ch : 0; /* raw files are mono */
	f->sel.offset = (uint64_t)off;
	f->sel.length = (uint64_t)len;
	if (f->file)
		r = token ? gf_cfg_watch_rate_files(L->c, f->file) : gf_cfg_add_file(L->c, f->file);
out:
	free(rel);
	free(format);
	return r < 0 ? r : 0;
}

/* "filters.NAME" for messages about the whole group. */
static const char *prefix_group(char *buf, const struct gf_config_filter *f)
{
	snprintf(buf, 160, "filters.%s", f->name);
	return buf;
}

static int parse_filter(const struct gf_cfg_loader *L, const config_setting_t *g, unsigned idx,
			struct gf_config_filter *f)
{
	char prefix[160];
	snprintf(prefix, sizeof(prefix), "filters[%u].", idx);
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return gf_cfg_fail_at(L, g, "filters", "entry %u must be a group { name = ...; ... }, not %s",
				      idx, gf_cfg_type_name(g));
	f->line = gf_cfg_line_of(g);
	if (!(f->src = strdup(gf_cfg_src_of(L, g))))
		return GF_E_NOMEM;
	int r = gf_cfg_get_str(L, g, prefix, "name", &f->name);
	if (r < 0)
		return r;
	if (r == 0)
		return gf_cfg_missing(L, g, prefix, "name", "every filter needs a name");
	for (const char *q = f->name; *q; q++) /* names end up in messages and the status block */
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			return gf_cfg_fail_at(L, config_setting_get_member(g, "name"), "name",
					      "filter %u: a name may not contain control characters "
					      "(newline, tab, escape)",
					      idx);
	snprintf(prefix, sizeof(prefix), "filters.%s.", f->name);
	const config_setting_t *co = config_setting_get_member(g, "coeffs");
	const config_setting_t *fi = config_setting_get_member(g, "file");
	const config_setting_t *de = config_setting_get_member(g, "design");
	if (fi && de && gf_cfg_is_peq(g))
		fi = NULL; /* a peq's file is its EQ text */
	if (!!co + !!fi + !!de != 1)
		return gf_cfg_fail_at(L, g, prefix_group(prefix, f),
				      "a filter needs exactly one of coeffs, file, design");
	if (co) {
		f->kind = FK_INLINE;
		r = parse_coeffs(L, co, prefix, f);
	} else if (fi) {
		r = parse_file_filter(L, g, prefix, f);
	} else {
		f->kind = FK_DESIGN;
		r = parse_design(L, g, prefix, f);
	}
	if (r < 0)
		return r;
	if ((r = gf_cfg_get_num(L, g, prefix, "gain_db", GAIN_DB_MIN, GAIN_DB_MAX, &f->gain_db)) < 0 ||
	    (r = gf_cfg_get_phase(L, g, prefix, 0, &f->minphase)) < 0)
		return r;
	note_keys(L, g, prefix, f);
	return 0;
}

int gf_config_find_filter(const struct gf_config *c, const char *name)
{
	uint32_t k;
	if (c->priv && c->priv->filter_index)
		return gf_strmap_get(c->priv->filter_index, name, &k) ? (int)k : -1;
	for (uint32_t i = 0; i < c->n_filters; i++)
		if (strcmp(c->filters[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Whether a configuration's filters depend on the input they filter: the file (offline), or,
 * live, the hum in the running input (config.h). */
int gf_config_reads_input(const struct gf_config *c)
{
	for (uint32_t i = 0; i < c->n_filters; i++) {
		const struct gf_config_filter *f = &c->filters[i];
		if (f->kind == FK_DESIGN &&
		    ((f->design.type == GF_DESIGN_DENOISE && f->design.use_input) || f->design.freq_auto))
			return 1;
	}
	return 0;
}

int gf_config_hum_auto(const struct gf_config *c, uint32_t *max_harmonic)
{
	int any = 0;
	*max_harmonic = 0;
	for (uint32_t i = 0; i < c->n_filters; i++) {
		const struct gf_config_filter *f = &c->filters[i];
		if (f->kind == FK_DESIGN && f->design.type == GF_DESIGN_NOTCH && f->design.freq_auto) {
			any = 1;
			if (f->design.harmonics > *max_harmonic)
				*max_harmonic = f->design.harmonics;
		}
	}
	return any;
}

int gf_cfg_parse_filters(const struct gf_cfg_loader *L, const config_setting_t *root)
{
	struct gf_config *c = L->c;
	const config_setting_t *fl = config_setting_get_member(root, "filters");
	if (!fl && config_setting_get_member(root, "mixer"))
		return 0; /* pure routing (gains, delays, polarity): a chain naming a filter fails there */
	if (!fl)
		return gf_cfg_fail_at(
			L, root, "filters",
			"missing: e.g. filters = ( { name = \"lp\"; design = \"lowpass\"; cutoff_hz = "
			"8000.0; taps = 255; } );");
	int t = config_setting_type(fl);
	if (t != CONFIG_TYPE_LIST)
		return gf_cfg_fail_at(L, fl, "filters", "must be a list ( {...}, ... ), not %s",
				      gf_cfg_type_name(fl));
	int n = config_setting_length(fl);
	if (n < 1)
		return gf_cfg_fail_at(L, fl, "filters", "is empty: define at least one filter");
	if (!(c->filters = calloc((size_t)n, sizeof(*c->filters))) || gf_strmap_new(&c->priv->filter_index))
		return GF_E_NOMEM;
	for (int i = 0; i < n; i++) {
		const config_setting_t *g = config_setting_get_elem(fl, (unsigned)i);
		int r = parse_filter(L, g, (unsigned)i, &c->filters[i]);
		c->n_filters = (uint32_t)i + 1;
		if (r < 0)
			return r;
		uint32_t dup;
		if ((r = gf_strmap_put(c->priv->filter_index, c->filters[i].name, (uint32_t)i, &dup)) < 0)
			return r;
		if (r == 1) {
			char name[192];
			snprintf(name, sizeof(name), "filters.%s.name", c->filters[i].name);
			return gf_cfg_fail_at(L, config_setting_get_member(g, "name"), name,
					      "duplicate filter name (first defined at line %d)",
					      c->filters[dup].line);
		}
	}
	return 0;
}

/* chain = ["a", "b"]: names that must exist in filters. */
