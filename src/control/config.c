/*
 * Configuration, loading: libconfig file -> validated struct gf_config.
 *
 * Load checks everything that does not depend on the sample rate (syntax,
 * types, ranges, names, that files exist) and keeps the line of every
 * setting, so config_build.c can report rate-dependent problems with the
 * same "FILE:LINE: SETTING: why" form.
 */
#include "config.h"

#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_priv.h"

const char *const gf_config_fkey_names[K_COUNT] = {
	"name",		  "coeffs",  "file",	  "format",	  "channel", "offset",	 "length",
	"design",	  "gain_db", "cutoff_hz", "low_hz",	  "high_hz", "taps",	 "transition_hz",
	"attenuation_db", "freq_hz", "harmonics", "bandwidth_hz", "q",	     "delay_ms",
};

/* ---- small helpers ------------------------------------------------------ */

struct loader {
	struct gf_config *c;
	struct gf_errbuf *eb;
	const char *name;     /* config name for messages when libconfig has none */
	const char *base_dir; /* relative filter paths resolve against this */
};

/* The file a setting is in: the config itself, or an @include'd file (made a path). */
static const char *src_of(const struct loader *L, const config_setting_t *s)
{
	static _Thread_local char buf[4096];
	const char *f = s ? config_setting_source_file(s) : NULL;
	if (!f)
		return L->name;
	if (f[0] == '/' || !L->base_dir)
		return f;
	snprintf(buf, sizeof(buf), "%s/%s", L->base_dir, f);
	return buf;
}

static int line_of(const config_setting_t *s)
{
	return s ? (int)config_setting_source_line(s) : 0;
}

static int fail_at(const struct loader *L, const config_setting_t *s, const char *setting, const char *fmt,
		   ...) __attribute__((format(printf, 4, 5)));
static int fail_at(const struct loader *L, const config_setting_t *s, const char *setting, const char *fmt,
		   ...)
{
	char why[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (line_of(s) > 0)
		gf_errbuf_set(L->eb, "%s:%d: %s: %s", src_of(L, s), line_of(s), setting, why);
	else /* the root group has no line: a top-level setting is missing */
		gf_errbuf_set(L->eb, "%s: %s: %s", src_of(L, s), setting, why);
	return GF_E_CONFIG;
}

static const char *type_name(const config_setting_t *s)
{
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		return "an integer";
	case CONFIG_TYPE_FLOAT:
		return "a number with a decimal point";
	case CONFIG_TYPE_STRING:
		return "a string";
	case CONFIG_TYPE_BOOL:
		return "a boolean";
	case CONFIG_TYPE_ARRAY:
		return "an array [...]";
	case CONFIG_TYPE_LIST:
		return "a list (...)";
	case CONFIG_TYPE_GROUP:
		return "a group {...}";
	default:
		return "something else";
	}
}

/* An integer or floating-point setting as a double. @return 0, or -1 when it is not a number */
static int number_of(const config_setting_t *s, double *x)
{
	int t = config_setting_type(s);
	if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
		*x = (double)config_setting_get_int64(s);
	else if (t == CONFIG_TYPE_FLOAT)
		*x = config_setting_get_float(s);
	else
		return -1;
	return 0;
}

/* "prefix" + "key" into buf (a setting's full name, for messages). */
static const char *setting(char *buf, size_t size, const char *prefix, const char *key)
{
	snprintf(buf, size, "%s%s", prefix, key);
	return buf;
}

static char *join_path(const char *dir, const char *file)
{
	if (file[0] == '/' || !dir || !dir[0])
		return strdup(file);
	size_t n = strlen(dir) + strlen(file) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, file);
	return p;
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static int add_file(struct gf_config *c, const char *path)
{
	for (uint32_t i = 0; i < c->n_files; i++)
		if (strcmp(c->files[i], path) == 0)
			return 0;
	char **f = realloc(c->files, (c->n_files + 1) * sizeof(*f));
	if (!f)
		return GF_E_NOMEM;
	c->files = f;
	if (!(f[c->n_files] = strdup(path)))
		return GF_E_NOMEM;
	c->n_files++;
	return 0;
}

/* ---- typed getters: 0 absent, 1 present and valid, < 0 error ------------- */

static int get_num(const struct loader *L, const config_setting_t *g, const char *prefix, const char *key,
		   double lo, double hi, double *v)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	if (!s)
		return 0;
	char name[192];
	setting(name, sizeof(name), prefix, key);
	double x;
	if (number_of(s, &x))
		return fail_at(L, s, name, "must be a number, not %s", type_name(s));
	if (!isfinite(x))
		return fail_at(L, s, name, "must be finite (got %g)", x);
	if (x < lo || x > hi)
		return fail_at(L, s, name, "must be %g..%g (got %g)", lo, hi, x);
	*v = x;
	return 1;
}

static int get_int(const struct loader *L, const config_setting_t *g, const char *prefix, const char *key,
		   long long lo, long long hi, long long *v)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	if (!s)
		return 0;
	char name[192];
	setting(name, sizeof(name), prefix, key);
	int t = config_setting_type(s);
	long long x;
	if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
		x = config_setting_get_int64(s);
	} else if (t == CONFIG_TYPE_FLOAT) {
		double d = config_setting_get_float(s);
		/* 48000.0 is fine; 128.5 is not */
		if (!(d == floor(d) && fabs(d) < 9e15))
			return fail_at(L, s, name, "must be a whole number (got %g)", d);
		x = (long long)d;
	} else {
		return fail_at(L, s, name, "must be an integer, not %s", type_name(s));
	}
	if (x < lo || x > hi)
		return fail_at(L, s, name, "must be %lld..%lld (got %lld)", lo, hi, x);
	*v = x;
	return 1;
}

static int get_str(const struct loader *L, const config_setting_t *g, const char *prefix, const char *key,
		   char **v)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	if (!s)
		return 0;
	char name[192];
	setting(name, sizeof(name), prefix, key);
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return fail_at(L, s, name, "must be a string, not %s", type_name(s));
	const char *x = config_setting_get_string(s);
	if (!x || !x[0])
		return fail_at(L, s, name, "must not be empty");
	free(*v);
	if (!(*v = strdup(x)))
		return GF_E_NOMEM;
	return 1;
}

static int get_bool(const struct loader *L, const config_setting_t *g, const char *prefix, const char *key,
		    int *v)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	if (!s)
		return 0;
	char name[192];
	setting(name, sizeof(name), prefix, key);
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return fail_at(L, s, name, "must be true or false, not %s", type_name(s));
	*v = config_setting_get_bool(s);
	return 1;
}

static int in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] && strcmp(name, list[i]) == 0)
			return 1;
	return 0;
}

/* Unknown settings are warnings, not errors: a newer config still loads. */
static void warn_unknown(const struct loader *L, const config_setting_t *g, const char *prefix,
			 const char *const *known, size_t n_known, const char *what)
{
	int n = config_setting_length(g);
	for (int i = 0; i < n; i++) {
		const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
		const char *name = config_setting_name(s);
		if (name && !in_list(name, known, n_known))
			gf_warn("%s:%d: %s%s: %s, ignored", src_of(L, s), line_of(s), prefix, name, what);
	}
}

/* ---- filters ------------------------------------------------------------ */

#define BIT(k) (1u << (k))
#define SINC_KEYS (BIT(K_TAPS) | BIT(K_TRANSITION_HZ) | BIT(K_ATTENUATION_DB))

static uint32_t allowed_keys(const struct gf_config_filter *f)
{
	uint32_t m = BIT(K_NAME) | BIT(K_GAIN_DB);
	switch (f->kind) {
	case FK_INLINE:
		return m | BIT(K_COEFFS);
	case FK_TEXT:
		return m | BIT(K_FILE) | BIT(K_FORMAT);
	case FK_WAV:
		return m | BIT(K_FILE) | BIT(K_FORMAT) | BIT(K_CHANNEL) | BIT(K_OFFSET) | BIT(K_LENGTH);
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
	case GF_DESIGN_IDENTITY:
		break;
	}
	return m;
}

/* Record key lines; warn about settings that this kind of filter does not use. */
static void note_keys(const struct loader *L, const config_setting_t *g, const char *prefix,
		      struct gf_config_filter *f)
{
	uint32_t allowed = allowed_keys(f);
	const char *what = f->kind == FK_DESIGN	  ? gf_design_type_name(f->design.type)
			   : f->kind == FK_INLINE ? "coeffs"
			   : f->kind == FK_TEXT	  ? "text file"
						  : "sound file";
	int n = config_setting_length(g);
	for (int i = 0; i < n; i++) {
		const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
		const char *name = config_setting_name(s);
		int k = 0;
		while (k < K_COUNT && strcmp(name, gf_config_fkey_names[k]) != 0)
			k++;
		if (k == K_COUNT)
			gf_warn("%s:%d: %s%s: unknown setting, ignored", src_of(L, s), line_of(s), prefix,
				name);
		else if (!(allowed & BIT(k)))
			gf_warn("%s:%d: %s%s: not used by a %s filter, ignored", src_of(L, s), line_of(s),
				prefix, name, what);
		else
			f->key_line[k] = line_of(s);
	}
}

static int parse_coeffs(const struct loader *L, const config_setting_t *a, const char *prefix,
			struct gf_config_filter *f)
{
	char name[192];
	setting(name, sizeof(name), prefix, "coeffs");
	int t = config_setting_type(a);
	if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST)
		return fail_at(L, a, name, "must be an array of numbers [...], not %s", type_name(a));
	int n = config_setting_length(a);
	if (n < 1)
		return fail_at(L, a, name, "is empty: give at least one coefficient");
	if (!(f->coeffs = malloc((size_t)n * sizeof(double))))
		return GF_E_NOMEM;
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(a, (unsigned)i);
		double x;
		if (number_of(e, &x))
			return fail_at(L, e, name, "element %d must be a number, not %s", i, type_name(e));
		if (!isfinite(x))
			return fail_at(L, e, name, "element %d is not finite (%g)", i, x);
		f->coeffs[i] = x;
	}
	f->n_coeffs = (uint32_t)n;
	return 0;
}

/* A positive frequency-like number; 0 if absent. */
static int get_pos(const struct loader *L, const config_setting_t *g, const char *prefix, const char *key,
		   double hi, double *v)
{
	int r = get_num(L, g, prefix, key, -INFINITY, hi, v);
	if (r == 1 && !(*v > 0.0)) {
		char name[192];
		setting(name, sizeof(name), prefix, key);
		return fail_at(L, config_setting_get_member(g, key), name, "must be above 0 (got %g)", *v);
	}
	return r;
}

/* freq_hz = 50.0; or freq_hz = [50.0, 60.0]; */
static int get_freqs(const struct loader *L, const config_setting_t *g, const char *prefix,
		     struct gf_design *d)
{
	const config_setting_t *s = config_setting_get_member(g, "freq_hz");
	if (!s)
		return 0;
	char name[192];
	setting(name, sizeof(name), prefix, "freq_hz");
	int t = config_setting_type(s);
	if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
		d->n_freq = 1;
		return get_pos(L, g, prefix, "freq_hz", 1e6, &d->freq_hz[0]);
	}
	int n = config_setting_length(s);
	if (n < 1 || n > GF_DESIGN_MAX_FREQS)
		return fail_at(L, s, name, "give 1..%d frequencies (got %d)", GF_DESIGN_MAX_FREQS, n);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		double x;
		if (number_of(e, &x))
			return fail_at(L, e, name, "element %d must be a number, not %s", i, type_name(e));
		if (!(x > 0.0 && x <= 1e6))
			return fail_at(L, e, name, "element %d must be above 0 Hz (got %g)", i, x);
		d->freq_hz[i] = x;
	}
	d->n_freq = (uint32_t)n;
	return 1;
}

static int missing(const struct loader *L, const config_setting_t *g, const char *prefix, const char *key,
		   const char *why)
{
	char name[192];
	setting(name, sizeof(name), prefix, key);
	return fail_at(L, g, name, "missing: %s", why);
}

static int parse_design(const struct loader *L, const config_setting_t *g, const char *prefix,
			struct gf_config_filter *f)
{
	struct gf_design *d = &f->design;
	char *type = NULL;
	int r = get_str(L, g, prefix, "design", &type);
	if (r < 0)
		return r;
	enum gf_design_type t;
	if (gf_design_parse_type(type, &t)) {
		char name[192];
		setting(name, sizeof(name), prefix, "design");
		r = fail_at(L, config_setting_get_member(g, "design"), name,
			    "unknown design \"%s\" (lowpass, highpass, bandpass, bandstop, notch, identity, "
			    "delay)",
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
	    (r = get_num(L, g, prefix, "q", 1.0, 10000.0, &d->q)) < 0 ||
	    (r = get_num(L, g, prefix, "attenuation_db", 20.0, 200.0, &d->attenuation_db)) < 0 ||
	    (r = get_num(L, g, prefix, "delay_ms", 0.0, 10000.0, &d->delay_ms)) < 0 ||
	    (r = get_int(L, g, prefix, "taps", 1, GF_DESIGN_MAX_TAPS, &taps)) < 0 ||
	    (r = get_int(L, g, prefix, "harmonics", 1, GF_DESIGN_MAX_NOTCHES, &harm)) < 0)
		return r;
	d->taps = (uint32_t)taps;
	d->harmonics = (uint32_t)harm;
	if (taps && !(taps & 1) && t != GF_DESIGN_IDENTITY && t != GF_DESIGN_DELAY) {
		char name[192];
		setting(name, sizeof(name), prefix, "taps");
		return fail_at(L, config_setting_get_member(g, "taps"), name,
			       "must be odd for a linear-phase %s (got %lld)", gf_design_type_name(t), taps);
	}
	switch (t) {
	case GF_DESIGN_LOWPASS:
	case GF_DESIGN_HIGHPASS:
		if (d->cutoff_hz == 0.0)
			return missing(L, g, prefix, "cutoff_hz", "the -6 dB frequency in Hz");
		break;
	case GF_DESIGN_BANDPASS:
	case GF_DESIGN_BANDSTOP:
		if (d->low_hz == 0.0)
			return missing(L, g, prefix, "low_hz", "the lower band edge in Hz");
		if (d->high_hz == 0.0)
			return missing(L, g, prefix, "high_hz", "the upper band edge in Hz");
		if (!(d->low_hz < d->high_hz)) {
			char name[192];
			setting(name, sizeof(name), prefix, "high_hz");
			return fail_at(L, config_setting_get_member(g, "high_hz"), name,
				       "must be above low_hz (%g <= %g)", d->high_hz, d->low_hz);
		}
		break;
	case GF_DESIGN_NOTCH:
		if (d->n_freq == 0)
			return missing(L, g, prefix, "freq_hz",
				       "the hum frequency, e.g. 50.0 or [50.0, 60.0]");
		if ((d->taps != 0) + (d->bandwidth_hz != 0.0) + (d->q != 0.0) != 1) {
			char grp[160];
			snprintf(grp, sizeof(grp), "filters.%s", f->name);
			return fail_at(L, g, grp, "a notch needs exactly one of taps, bandwidth_hz, q");
		}
		for (uint32_t i = 0; i < d->n_freq; i++) {
			if (d->bandwidth_hz != 0.0 && !(d->bandwidth_hz < d->freq_hz[i])) {
				char name[192];
				setting(name, sizeof(name), prefix, "bandwidth_hz");
				return fail_at(L, config_setting_get_member(g, "bandwidth_hz"), name,
					       "must be below freq_hz (%g Hz)", d->freq_hz[i]);
			}
		}
		return 0;
	case GF_DESIGN_DELAY:
		if (!config_setting_get_member(g, "delay_ms"))
			return missing(L, g, prefix, "delay_ms", "the delay in milliseconds");
		return 0;
	case GF_DESIGN_IDENTITY:
		return 0;
	}
	if (!d->taps && d->transition_hz == 0.0)
		return missing(L, g, prefix, "taps", "give taps (odd) or transition_hz");
	return 0;
}

static int parse_file_filter(const struct loader *L, const config_setting_t *g, const char *prefix,
			     struct gf_config_filter *f)
{
	char *rel = NULL, *format = NULL;
	int r = get_str(L, g, prefix, "file", &rel);
	if (r >= 0)
		r = get_str(L, g, prefix, "format", &format);
	if (r < 0)
		goto out;
	const config_setting_t *fs = config_setting_get_member(g, "file");
	char name[192];
	setting(name, sizeof(name), prefix, "file");
	f->kind = gf_taps_is_sound_file(rel) ? FK_WAV : FK_TEXT;
	if (format) {
		if (strcmp(format, "text") == 0) {
			f->kind = FK_TEXT;
		} else if (strcmp(format, "wav") == 0 || strcmp(format, "sound") == 0) {
			f->kind = FK_WAV;
		} else {
			setting(name, sizeof(name), prefix, "format");
			r = fail_at(L, config_setting_get_member(g, "format"), name,
				    "must be \"text\" or \"wav\" (got \"%s\")", format);
			goto out;
		}
	}
	if (!(f->file = join_path(L->base_dir, rel))) {
		r = GF_E_NOMEM;
		goto out;
	}
	if (access(f->file, R_OK) != 0) {
		r = fail_at(L, fs, name, "cannot read %s: %s", f->file, strerror(errno));
		goto out;
	}
	long long ch = 0, off = 0, len = 0;
	if ((r = get_int(L, g, prefix, "channel", 0, MAX_CHANNELS - 1, &ch)) < 0 ||
	    (r = get_int(L, g, prefix, "offset", 0, 1LL << 40, &off)) < 0 ||
	    (r = get_int(L, g, prefix, "length", 1, GF_TAPS_MAX, &len)) < 0)
		goto out;
	f->sel.channel = (uint32_t)ch;
	f->sel.offset = (uint64_t)off;
	f->sel.length = (uint64_t)len;
	r = add_file(L->c, f->file);
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

static int parse_filter(const struct loader *L, const config_setting_t *g, unsigned idx,
			struct gf_config_filter *f)
{
	char prefix[160];
	snprintf(prefix, sizeof(prefix), "filters[%u].", idx);
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return fail_at(L, g, "filters", "entry %u must be a group { name = ...; ... }, not %s", idx,
			       type_name(g));
	f->line = line_of(g);
	if (!(f->src = strdup(src_of(L, g))))
		return GF_E_NOMEM;
	int r = get_str(L, g, prefix, "name", &f->name);
	if (r < 0)
		return r;
	if (r == 0)
		return missing(L, g, prefix, "name", "every filter needs a name");
	snprintf(prefix, sizeof(prefix), "filters.%s.", f->name);
	const config_setting_t *co = config_setting_get_member(g, "coeffs");
	const config_setting_t *fi = config_setting_get_member(g, "file");
	const config_setting_t *de = config_setting_get_member(g, "design");
	if (!!co + !!fi + !!de != 1)
		return fail_at(L, g, prefix_group(prefix, f),
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
	if ((r = get_num(L, g, prefix, "gain_db", GAIN_DB_MIN, GAIN_DB_MAX, &f->gain_db)) < 0)
		return r;
	note_keys(L, g, prefix, f);
	return 0;
}

int gf_config_find_filter(const struct gf_config *c, const char *name)
{
	for (uint32_t i = 0; i < c->n_filters; i++)
		if (strcmp(c->filters[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int parse_filters(const struct loader *L, const config_setting_t *root)
{
	struct gf_config *c = L->c;
	const config_setting_t *fl = config_setting_get_member(root, "filters");
	if (!fl)
		return fail_at(L, root, "filters",
			       "missing: e.g. filters = ( { name = \"lp\"; design = \"lowpass\"; cutoff_hz = "
			       "8000.0; taps = 255; } );");
	int t = config_setting_type(fl);
	if (t != CONFIG_TYPE_LIST)
		return fail_at(L, fl, "filters", "must be a list ( {...}, ... ), not %s", type_name(fl));
	int n = config_setting_length(fl);
	if (n < 1)
		return fail_at(L, fl, "filters", "is empty: define at least one filter");
	if (!(c->filters = calloc((size_t)n, sizeof(*c->filters))))
		return GF_E_NOMEM;
	for (int i = 0; i < n; i++) {
		const config_setting_t *g = config_setting_get_elem(fl, (unsigned)i);
		int r = parse_filter(L, g, (unsigned)i, &c->filters[i]);
		c->n_filters = (uint32_t)i + 1;
		if (r < 0)
			return r;
		int dup = gf_config_find_filter(c, c->filters[i].name);
		if (dup >= 0 && dup < i) {
			char name[192];
			snprintf(name, sizeof(name), "filters.%s.name", c->filters[i].name);
			return fail_at(L, config_setting_get_member(g, "name"), name,
				       "duplicate filter name (first defined at line %d)",
				       c->filters[dup].line);
		}
	}
	return 0;
}

/* chain = ["a", "b"]: names that must exist in filters. */
static int parse_names(const struct loader *L, const config_setting_t *a, const char *setting, char ***out,
		       uint32_t *n_out)
{
	struct gf_config *c = L->c;
	int t = config_setting_type(a);
	if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST)
		return fail_at(L, a, setting, "must be an array of filter names [\"a\", \"b\"], not %s",
			       type_name(a));
	int n = config_setting_length(a);
	char **v = calloc((size_t)n + 1, sizeof(char *));
	if (!v)
		return GF_E_NOMEM;
	*out = v;
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(a, (unsigned)i);
		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return fail_at(L, e, setting, "element %d must be a filter name (a string), not %s",
				       i, type_name(e));
		const char *name = config_setting_get_string(e);
		int k = gf_config_find_filter(c, name);
		if (k < 0)
			return fail_at(L, e, setting, "no filter named \"%s\"", name);
		c->filters[k].used = 1;
		if (!(v[i] = strdup(name)))
			return GF_E_NOMEM;
		*n_out = (uint32_t)i + 1;
	}
	return 0;
}

static const char *const route_keys[] = {"channel", "chain", "gain_db", "delay_ms", "invert"};

static int parse_route(const struct loader *L, const config_setting_t *g, unsigned idx,
		       struct gf_config_route *r)
{
	char prefix[64], name[96];
	snprintf(prefix, sizeof(prefix), "routes[%u].", idx);
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return fail_at(L, g, "routes", "entry %u must be a group { channel = 0; ... }, not %s", idx,
			       type_name(g));
	r->line = line_of(g);
	if (!(r->src = strdup(src_of(L, g))))
		return GF_E_NOMEM;
	long long ch = -1;
	int e = get_int(L, g, prefix, "channel", 0, MAX_CHANNELS - 1, &ch);
	if (e < 0)
		return e;
	if (e == 0)
		return missing(L, g, prefix, "channel", "the 0-based channel this route filters");
	r->channel = (uint32_t)ch;
	r->channel_line = line_of(config_setting_get_member(g, "channel"));
	const config_setting_t *ca = config_setting_get_member(g, "chain");
	if (ca) {
		setting(name, sizeof(name), prefix, "chain");
		r->has_chain = 1;
		r->chain_line = line_of(ca);
		if ((e = parse_names(L, ca, name, &r->chain, &r->n_chain)) < 0)
			return e;
	}
	if ((e = get_num(L, g, prefix, "gain_db", GAIN_DB_MIN, GAIN_DB_MAX, &r->gain_db)) < 0 ||
	    (e = get_num(L, g, prefix, "delay_ms", 0.0, 10000.0, &r->delay_ms)) < 0 ||
	    (e = get_bool(L, g, prefix, "invert", &r->invert)) < 0)
		return e;
	warn_unknown(L, g, prefix, route_keys, sizeof(route_keys) / sizeof(route_keys[0]), "unknown setting");
	return 0;
}

static int parse_routes(const struct loader *L, const config_setting_t *root)
{
	struct gf_config *c = L->c;
	const config_setting_t *rl = config_setting_get_member(root, "routes");
	if (!rl)
		return 0;
	int t = config_setting_type(rl);
	if (t != CONFIG_TYPE_LIST)
		return fail_at(L, rl, "routes", "must be a list ( {...}, ... ), not %s", type_name(rl));
	int n = config_setting_length(rl);
	if (n == 0)
		return 0;
	if (!(c->routes = calloc((size_t)n, sizeof(*c->routes))))
		return GF_E_NOMEM;
	for (int i = 0; i < n; i++) {
		const config_setting_t *g = config_setting_get_elem(rl, (unsigned)i);
		int e = parse_route(L, g, (unsigned)i, &c->routes[i]);
		c->n_routes = (uint32_t)i + 1;
		if (e < 0)
			return e;
		for (int j = 0; j < i; j++) {
			if (c->routes[j].channel == c->routes[i].channel) {
				char name[64];
				snprintf(name, sizeof(name), "routes[%d].channel", i);
				return fail_at(L, config_setting_get_member(g, "channel"), name,
					       "channel %u already has a route (line %d)",
					       c->routes[i].channel, c->routes[j].line);
			}
		}
	}
	return 0;
}

/* ---- top level ---------------------------------------------------------- */

static const char *const top_keys[] = {
	"sample_rate",	"block_frames", "backend",   "algo",	      "gpu",
	"crossfade_ms", "max_taps",	"log_level", "status_socket", "latency_slack",
	"input",	"output",	"filters",   "chain",	      "routes",
};
static const char *const endpoint_keys[] = {"device", "host_api", "channels", "file"};

static int parse_endpoint(const struct loader *L, const config_setting_t *root, const char *key,
			  struct gf_audio_endpoint *ep, int is_output)
{
	const config_setting_t *g = config_setting_get_member(root, key);
	if (!g)
		return 0;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return fail_at(L, g, key, "must be a group { device = \"...\"; }, not %s", type_name(g));
	char prefix[32];
	snprintf(prefix, sizeof(prefix), "%s.", key);
	const config_setting_t *dev = config_setting_get_member(g, "device");
	int r;
	if (dev &&
	    (config_setting_type(dev) == CONFIG_TYPE_INT || config_setting_type(dev) == CONFIG_TYPE_INT64)) {
		char num[32];
		snprintf(num, sizeof(num), "%lld", (long long)config_setting_get_int64(dev));
		if (!(ep->device = strdup(num)))
			return GF_E_NOMEM;
	} else if ((r = get_str(L, g, prefix, "device", &ep->device)) < 0) {
		return r;
	}
	long long ch = 0;
	if ((r = get_str(L, g, prefix, "host_api", &ep->host_api)) < 0 ||
	    (r = get_int(L, g, prefix, "channels", 0, MAX_CHANNELS, &ch)) < 0)
		return r;
	ep->channels = (uint32_t)ch;
	if (is_output) {
		char *rel = NULL;
		if ((r = get_str(L, g, prefix, "file", &rel)) < 0)
			return r;
		if (rel) {
			ep->file = join_path(L->base_dir, rel);
			free(rel);
			if (!ep->file)
				return GF_E_NOMEM;
		}
	}
	warn_unknown(L, g, prefix, endpoint_keys, is_output ? 4 : 3, "unknown setting");
	return 0;
}

static int parse_enum(const struct loader *L, const config_setting_t *root, const char *key,
		      const char *const *names, int n, int *out)
{
	char *s = NULL;
	int r = get_str(L, root, "", key, &s);
	if (r <= 0)
		return r;
	for (int i = 0; i < n; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			free(s);
			return 1;
		}
	}
	char list[128] = "";
	for (int i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s\"%s\"", i ? ", " : "",
			 names[i]);
	r = fail_at(L, config_setting_get_member(root, key), key, "must be one of %s (got \"%s\")", list, s);
	free(s);
	return r;
}

static int parse_scalars(const struct loader *L, const config_setting_t *root)
{
	struct gf_config *c = L->c;
	static const char *const backends[] = {"auto", "cpu", "cuda"}; /* enum gf_backend_kind order */
	static const char *const algos[] = {"auto", "direct", "fft"};  /* enum gf_algo order */
	static const char *const levels[] = {"error", "warning", "notice", "info", "debug"};
	long long v;
	int r, e = 0; /* set whenever r > 0; initialised for -O3, which cannot see that */
	if ((r = get_int(L, root, "", "sample_rate", 8000, 384000, &v)) < 0)
		return r;
	if (r)
		c->sample_rate = (uint32_t)v;
	if ((r = get_int(L, root, "", "block_frames", 16, 8192, &v)) < 0)
		return r;
	if (r)
		c->block_frames = (uint32_t)v;
	if ((r = get_int(L, root, "", "gpu", 0, 255, &v)) < 0)
		return r;
	if (r)
		c->gpu_index = (int)v;
	if ((r = get_int(L, root, "", "max_taps", 0, GF_DESIGN_MAX_TAPS, &v)) < 0)
		return r;
	if (r) {
		c->max_taps = (uint32_t)v;
		c->priv->max_taps_line = line_of(config_setting_get_member(root, "max_taps"));
	}
	if ((r = get_num(L, root, "", "crossfade_ms", 0.0, 10000.0, &c->crossfade_ms)) < 0)
		return r;
	if ((r = get_int(L, root, "", "latency_slack", 0, 16, &v)) < 0)
		return r;
	if (r)
		c->latency_slack = (uint32_t)v;
	if ((r = parse_enum(L, root, "backend", backends, 3, &e)) < 0)
		return r;
	if (r)
		c->backend = (enum gf_backend_kind)e;
	if ((r = parse_enum(L, root, "algo", algos, 3, &e)) < 0)
		return r;
	if (r)
		c->algo = (enum gf_algo)e;
	if ((r = parse_enum(L, root, "log_level", levels, 5, &e)) < 0)
		return r;
	if (r)
		gf_log_parse_level(levels[e], &c->log_level);
	if ((r = get_str(L, root, "", "status_socket", &c->status_socket)) < 0)
		return r;
	return 0;
}

static int parse_chain(const struct loader *L, const config_setting_t *root)
{
	struct gf_config *c = L->c;
	const config_setting_t *a = config_setting_get_member(root, "chain");
	if (!a) {
		if (c->n_routes)
			return 0; /* channels without a route pass through */
		return fail_at(L, root, "chain", "missing: name the filters to apply, e.g. chain = [\"%s\"];",
			       c->filters[0].name);
	}
	c->priv->chain_line = line_of(a);
	return parse_names(L, a, "chain", &c->chain, &c->n_chain);
}

/*
 * Every file libconfig read (the config and its @include files), for reload
 * watching. libconfig names included files as written; they were opened
 * relative to the include directory, which is the config's folder.
 */
static int collect_sources(const struct loader *L, const config_setting_t *s)
{
	const char *f = config_setting_source_file(s);
	int r = 0;
	if (f) {
		char *p = join_path(L->base_dir, f);
		r = p ? add_file(L->c, p) : GF_E_NOMEM;
		free(p);
	}
	int t = config_setting_type(s);
	if (t == CONFIG_TYPE_GROUP || t == CONFIG_TYPE_LIST) {
		int n = config_setting_length(s);
		for (int i = 0; i < n && !r; i++)
			r = collect_sources(L, config_setting_get_elem(s, (unsigned)i));
	}
	return r;
}

static void set_defaults(struct gf_config *c)
{
	c->block_frames = 256;
	c->backend = GF_BACKEND_AUTO;
	c->algo = GF_ALGO_AUTO;
	c->crossfade_ms = 20.0;
	c->latency_slack = 1;
	c->log_level = GF_LOG_INFO;
}

static int load_root(struct loader *L, const config_setting_t *root)
{
	int r;
	warn_unknown(L, root, "", top_keys, sizeof(top_keys) / sizeof(top_keys[0]), "unknown setting");
	if ((r = parse_scalars(L, root)) < 0 || (r = parse_endpoint(L, root, "input", &L->c->input, 0)) < 0 ||
	    (r = parse_endpoint(L, root, "output", &L->c->output, 1)) < 0 ||
	    (r = parse_filters(L, root)) < 0 || (r = parse_routes(L, root)) < 0 ||
	    (r = parse_chain(L, root)) < 0)
		return r;
	for (uint32_t i = 0; i < L->c->n_filters; i++) {
		const struct gf_config_filter *f = &L->c->filters[i];
		if (!f->used)
			gf_warn("%s:%d: filters.%s: defined but not used in chain or routes", f->src, f->line,
				f->name);
	}
	return 0;
}

static int load_common(config_t *cfg, int parsed, struct loader *L, struct gf_config **out)
{
	struct gf_config *c = L->c;
	int r = GF_E_NOMEM;
	if (!(c->priv = calloc(1, sizeof(*c->priv))) || !(c->priv->src = strdup(L->name)))
		goto fail;
	if (!parsed) {
		gf_errbuf_set(L->eb, "%s:%d: %s", config_error_file(cfg) ? config_error_file(cfg) : L->name,
			      config_error_line(cfg),
			      config_error_text(cfg) ? config_error_text(cfg) : "parse error");
		r = GF_E_CONFIG;
		goto fail;
	}
	if ((r = collect_sources(L, config_root_setting(cfg))) < 0 ||
	    (r = load_root(L, config_root_setting(cfg))) < 0)
		goto fail;
	config_destroy(cfg);
	*out = c;
	return 0;
fail:
	config_destroy(cfg);
	gf_config_free(c);
	return r;
}

int gf_config_load(const char *path, struct gf_config **out, struct gf_errbuf *eb)
{
	*out = NULL;
	if (!path)
		return GF_E_INVAL;
	FILE *fp = fopen(path, "r");
	if (!fp) {
		gf_errbuf_set(eb, "%s: cannot open: %s", path, strerror(errno));
		return GF_E_IO;
	}
	struct gf_config *c = calloc(1, sizeof(*c));
	char *dir = dir_of(path);
	if (!c || !dir || !(c->path = strdup(path)) || add_file(c, path)) {
		fclose(fp);
		free(dir);
		gf_config_free(c);
		return GF_E_NOMEM;
	}
	set_defaults(c);
	config_t cfg;
	config_init(&cfg);
	config_set_include_dir(&cfg, dir);
	int ok = config_read(&cfg, fp) == CONFIG_TRUE;
	fclose(fp);
	struct loader L = {.c = c, .eb = eb, .name = path, .base_dir = dir};
	int r = load_common(&cfg, ok, &L, out);
	free(dir);
	return r;
}

int gf_config_load_string(const char *text, const char *base_dir, struct gf_config **out,
			  struct gf_errbuf *eb)
{
	*out = NULL;
	if (!text)
		return GF_E_INVAL;
	struct gf_config *c = calloc(1, sizeof(*c));
	if (!c)
		return GF_E_NOMEM;
	set_defaults(c);
	config_t cfg;
	config_init(&cfg);
	if (base_dir)
		config_set_include_dir(&cfg, base_dir);
	int ok = config_read_string(&cfg, text) == CONFIG_TRUE;
	struct loader L = {.c = c, .eb = eb, .name = "<string>", .base_dir = base_dir ? base_dir : "."};
	return load_common(&cfg, ok, &L, out);
}

/* ---- the built-in default ----------------------------------------------- */

/* config/gpufir.conf is this same chain written out (a test checks they match). */
static const char default_text[] =
	"filters = (\n"
	"  { name = \"rumble\"; design = \"highpass\"; cutoff_hz = 60.0; transition_hz = 80.0;\n"
	"    attenuation_db = 40.0; },\n"
	"  { name = \"hum\"; design = \"notch\"; freq_hz = [50.0, 60.0]; harmonics = 4;\n"
	"    bandwidth_hz = 15.0; attenuation_db = 40.0; },\n"
	"  { name = \"hiss\"; design = \"lowpass\"; cutoff_hz = 14000.0; transition_hz = 2000.0;\n"
	"    attenuation_db = 60.0; }\n"
	");\n"
	"chain = [\"rumble\", \"hum\", \"hiss\"];\n";

int gf_config_load_source(const struct gf_config_source *src, struct gf_config **out, struct gf_errbuf *eb)
{
	int err = src->path ? gf_config_load(src->path, out, eb) : gf_config_default(out);
	if (err) {
		if (!src->path)
			gf_errbuf_set(eb, "built-in default config: %s", gf_strerror(err));
		return err;
	}
	if (src->backend_set)
		(*out)->backend = src->backend;
	if (src->algo_set)
		(*out)->algo = src->algo;
	return 0;
}

int gf_config_default(struct gf_config **out)
{
	struct gf_errbuf eb;
	int r = gf_config_load_string(default_text, NULL, out, &eb);
	if (r) {
		gf_err("built-in default config: %s", eb.msg);
		return r;
	}
	free((*out)->priv->src);
	(*out)->priv->builtin = 1;
	if (!((*out)->priv->src = strdup("<built-in default>")))
		r = GF_E_NOMEM;
	if (r) {
		gf_config_free(*out);
		*out = NULL;
	}
	return r;
}

/* ---- free --------------------------------------------------------------- */

static void free_names(char **v, uint32_t n)
{
	if (!v)
		return;
	for (uint32_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void gf_config_free(struct gf_config *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->n_filters; i++) {
		free(c->filters[i].name);
		free(c->filters[i].src);
		free(c->filters[i].coeffs);
		free(c->filters[i].file);
	}
	free(c->filters);
	for (uint32_t i = 0; i < c->n_routes; i++) {
		free(c->routes[i].src);
		free_names(c->routes[i].chain, c->routes[i].n_chain);
	}
	free(c->routes);
	free_names(c->chain, c->n_chain);
	free_names(c->files, c->n_files);
	struct gf_audio_endpoint *eps[2] = {&c->input, &c->output};
	for (int i = 0; i < 2; i++) {
		free(eps[i]->device);
		free(eps[i]->host_api);
		free(eps[i]->file);
	}
	free(c->status_socket);
	free(c->path);
	if (c->priv)
		free(c->priv->src);
	free(c->priv);
	free(c);
}
