/*
 * Reading libconfig settings for the config loader: typed getters that check
 * type and range and fail with "FILE:LINE: SETTING: why", the file a setting
 * came from (@include), the watched-files list (paths themselves: config_paths.c).
 * Getters return 0 when the setting is absent, 1 when present and valid, and
 * a negative GF_E_* on error.
 */
#include "config_parse.h"

#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_priv.h"

/* The file a setting is in: the config itself, or an @include'd file (made a path). */
const char *gf_cfg_src_of(const struct gf_cfg_loader *L, const config_setting_t *s)
{
	static _Thread_local char buf[4096];
	const char *f = gf_cfg_includes_path(L->inc, s ? config_setting_source_file(s) : NULL);
	if (!f)
		return L->name;
	if (f[0] == '/' || !L->base_dir)
		return f;
	snprintf(buf, sizeof(buf), "%s/%s", L->base_dir, f);
	return buf;
}

int gf_cfg_line_of(const config_setting_t *s)
{
	return s ? (int)config_setting_source_line(s) : 0;
}

int gf_cfg_fail_at(const struct gf_cfg_loader *L, const config_setting_t *s, const char *setting,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int gf_cfg_fail_at(const struct gf_cfg_loader *L, const config_setting_t *s, const char *setting,
		   const char *fmt, ...)
{
	char why[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (gf_cfg_line_of(s) > 0)
		gf_errbuf_set(L->eb, "%s:%d: %s: %s", gf_cfg_src_of(L, s), gf_cfg_line_of(s), setting, why);
	else /* the root group has no line: a top-level setting is missing */
		gf_errbuf_set(L->eb, "%s: %s: %s", gf_cfg_src_of(L, s), setting, why);
	return GF_E_CONFIG;
}

int gf_cfg_fail_key(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		    const char *key, const char *fmt, ...)
{
	char name[192], why[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	gf_cfg_setting(name, sizeof(name), prefix, key);
	return gf_cfg_fail_at(L, config_setting_get_member(g, key), name, "%s", why);
}

const char *gf_cfg_type_name(const config_setting_t *s)
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
int gf_cfg_number_of(const config_setting_t *s, double *x)
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
const char *gf_cfg_setting(char *buf, size_t size, const char *prefix, const char *key)
{
	snprintf(buf, size, "%s%s", prefix, key);
	return buf;
}

/* The index is made on the first call after load_common made priv (the
 * config's own path comes before: a scan of one name). Growth doubles. */
int gf_cfg_add_file(struct gf_config *c, const char *path)
{
	struct gf_strmap **ix = c->priv ? &c->priv->file_index : NULL;
	uint32_t k;
	if (ix && !*ix) {
		if (gf_strmap_new(ix))
			return GF_E_NOMEM;
		for (uint32_t i = 0; i < c->n_files; i++)
			if (gf_strmap_put(*ix, c->files[i], i, NULL) < 0)
				return GF_E_NOMEM;
	}
	if (ix ? gf_strmap_get(*ix, path, &k) : 0)
		return 0;
	for (uint32_t i = 0; !ix && i < c->n_files; i++)
		if (strcmp(c->files[i], path) == 0)
			return 0;
	if ((c->n_files & (c->n_files - 1)) == 0) { /* 0, 1, 2, 4, ...: double */
		char **f = realloc(c->files, (c->n_files ? c->n_files * 2 : 1) * sizeof(*f));
		if (!f)
			return GF_E_NOMEM;
		c->files = f;
	}
	if (!(c->files[c->n_files] = strdup(path)))
		return GF_E_NOMEM;
	if (ix && gf_strmap_put(*ix, c->files[c->n_files], c->n_files, NULL) < 0) {
		free(c->files[c->n_files]);
		return GF_E_NOMEM;
	}
	c->n_files++;
	return 0;
}

/* ---- typed getters: 0 absent, 1 present and valid, < 0 error ------------- */

int gf_cfg_get_num(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		   const char *key, double lo, double hi, double *v)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	if (!s)
		return 0;
	char name[192];
	gf_cfg_setting(name, sizeof(name), prefix, key);
	double x;
	if (gf_cfg_number_of(s, &x))
		return gf_cfg_fail_at(L, s, name, "must be a number, not %s", gf_cfg_type_name(s));
	if (!isfinite(x))
		return gf_cfg_fail_at(L, s, name, "must be finite (got %g)", x);
	if (x < lo || x > hi)
		return gf_cfg_fail_at(L, s, name, "must be %g..%g (got %g)", lo, hi, x);
	*v = x;
	return 1;
}

int gf_cfg_get_int(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		   const char *key, long long lo, long long hi, long long *v)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	if (!s)
		return 0;
	char name[192];
	gf_cfg_setting(name, sizeof(name), prefix, key);
	int t = config_setting_type(s);
	long long x;
	if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
		x = config_setting_get_int64(s);
	} else if (t == CONFIG_TYPE_FLOAT) {
		double d = config_setting_get_float(s);
		/* 48000.0 is fine; 128.5 is not */
		if (!(d == floor(d) && fabs(d) < 9e15))
			return gf_cfg_fail_at(L, s, name, "must be a whole number (got %g)", d);
		x = (long long)d;
	} else {
		return gf_cfg_fail_at(L, s, name, "must be an integer, not %s", gf_cfg_type_name(s));
	}
	if (x < lo || x > hi)
		return gf_cfg_fail_at(L, s, name, "must be %lld..%lld (got %lld)", lo, hi, x);
	*v = x;
	return 1;
}

int gf_cfg_get_str(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		   const char *key, char **v)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	if (!s)
		return 0;
	char name[192];
	gf_cfg_setting(name, sizeof(name), prefix, key);
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return gf_cfg_fail_at(L, s, name, "must be a string, not %s", gf_cfg_type_name(s));
	const char *x = config_setting_get_string(s);
	if (!x || !x[0])
		return gf_cfg_fail_at(L, s, name, "must not be empty");
	free(*v);
	if (!(*v = strdup(x)))
		return GF_E_NOMEM;
	return 1;
}

int gf_cfg_get_bool(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		    const char *key, int *v)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	if (!s)
		return 0;
	char name[192];
	gf_cfg_setting(name, sizeof(name), prefix, key);
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return gf_cfg_fail_at(L, s, name, "must be true or false, not %s", gf_cfg_type_name(s));
	*v = config_setting_get_bool(s);
	return 1;
}

/* A filter's `phase`, or the top-level one that applies to each channel's pre-convolved chain. */
int gf_cfg_get_phase(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		     int allow_auto, int *v)
{
	char *s = NULL;
	int r = gf_cfg_get_str(L, g, prefix, "phase", &s);
	if (r <= 0)
		return r;
	if (strcmp(s, "linear") == 0)
		*v = GF_PHASE_LINEAR;
	else if (strcmp(s, "minimum") == 0)
		*v = GF_PHASE_MINIMUM;
	else if (allow_auto && strcmp(s, "auto") == 0)
		*v = GF_PHASE_AUTO;
	else {
		char name[192];
		gf_cfg_setting(name, sizeof(name), prefix, "phase");
		r = gf_cfg_fail_at(L, config_setting_get_member(g, "phase"), name,
				   "must be \"linear\" or \"minimum\"%s (got \"%s\")",
				   allow_auto ? " or \"auto\"" : "", s);
	}
	free(s);
	return r;
}

int gf_cfg_in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] && strcmp(name, list[i]) == 0)
			return 1;
	return 0;
}

/* Unknown settings are warnings, not errors: a newer config still loads. */
void gf_cfg_warn_unknown(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
			 const char *const *known, size_t n_known, const char *what)
{
	int n = config_setting_length(g);
	for (int i = 0; i < n; i++) {
		const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
		const char *name = config_setting_name(s);
		if (name && !gf_cfg_in_list(name, known, n_known))
			gf_warn("%s:%d: %s%s: %s, ignored", gf_cfg_src_of(L, s), gf_cfg_line_of(s), prefix,
				name, what);
	}
}

/* A required setting @p key of group @p g is absent: say what it is for. */
int gf_cfg_missing(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		   const char *key, const char *why)
{
	char name[192];
	gf_cfg_setting(name, sizeof(name), prefix, key);
	return gf_cfg_fail_at(L, g, name, "missing: %s", why);
}
