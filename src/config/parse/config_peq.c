/*
 * design = "peq": parametric EQ bands, given in the config (bands = ( ... ))
 * or read from an Equalizer APO / AutoEQ / REW filter text (file = "...").
 * The bands are checked when the config loads (the file is read then, and
 * watched for reload); the sample rate is known only at build
 * (src/config/config_build.c), where freq_hz is checked against it and the
 * FIR designed (peq.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_priv.h"
#include "log.h"
#include "peq.h"
#include "safe_file.h"

/* An EQ text is a few lines per band: 1 MiB is far more than 256 bands need. */
#define PEQ_TEXT_MAX_BYTES ((size_t)1 << 20)

int gf_cfg_is_peq(const config_setting_t *g)
{
	const config_setting_t *d = config_setting_get_member(g, "design");
	return d && config_setting_type(d) == CONFIG_TYPE_STRING &&
	       strcmp(config_setting_get_string(d), "peq") == 0;
}

static const char *const band_keys[] = {"type", "freq_hz", "gain_db", "q", "bandwidth_oct", "slope"};

/* A band setting that is not a number where one is wanted; 1 if given, 0 if absent. */
static int band_num(const struct gf_cfg_loader *L, const config_setting_t *e, const char *prefix,
		    const char *key, double *v)
{
	return gf_cfg_get_num(L, e, prefix, key, -INFINITY, INFINITY, v);
}

/* gf_peq_band_finish's "KEY: why", placed at KEY's line (or the band's). */
static int band_error(const struct gf_cfg_loader *L, const config_setting_t *e, const char *prefix,
		      const char *msg)
{
	const char *colon = strchr(msg, ':');
	char key[32] = "", name[224];
	if (colon && (size_t)(colon - msg) < sizeof(key))
		memcpy(key, msg, (size_t)(colon - msg)), key[colon - msg] = '\0';
	const config_setting_t *s = key[0] ? config_setting_get_member(e, key) : NULL;
	snprintf(name, sizeof(name), "%s%s", prefix, key[0] ? key : "type");
	return gf_cfg_fail_at(L, s ? s : e, name, "%s", colon ? colon + 2 : msg);
}

static int parse_band(const struct gf_cfg_loader *L, const config_setting_t *e, const char *fprefix,
		      unsigned i, struct gf_peq *p)
{
	char prefix[200], *type = NULL;
	snprintf(prefix, sizeof(prefix), "%sbands[%u].", fprefix, i);
	if (config_setting_type(e) != CONFIG_TYPE_GROUP)
		return gf_cfg_fail_at(L, e, "bands",
				      "entry %u must be a group { type = ...; freq_hz = ...; }, not %s", i,
				      gf_cfg_type_name(e));
	struct gf_peq_band b = {.line = gf_cfg_line_of(e)};
	int r = gf_cfg_get_str(L, e, prefix, "type", &type);
	if (r == 0)
		return gf_cfg_missing(
			L, e, prefix, "type",
			"peaking, lowshelf, highshelf, lowpass, highpass, bandpass, notch or allpass");
	if (r > 0 && gf_peq_parse_type(type, &b.type)) {
		char name[224];
		snprintf(name, sizeof(name), "%stype", prefix);
		r = gf_cfg_fail_at(
			L, config_setting_get_member(e, "type"), name,
			"unknown band type \"%s\" (peaking, lowshelf, highshelf, lowpass, highpass, "
			"bandpass, notch, allpass)",
			type);
	}
	free(type);
	if (r < 0)
		return r;
	if ((r = band_num(L, e, prefix, "freq_hz", &b.freq_hz)) < 0 ||
	    (r = band_num(L, e, prefix, "gain_db", &b.gain_db)) < 0)
		return r;
	b.has_gain = r;
	if ((r = band_num(L, e, prefix, "q", &b.q)) < 0 ||
	    (r = band_num(L, e, prefix, "bandwidth_oct", &b.bw_oct)) < 0 ||
	    (r = band_num(L, e, prefix, "slope", &b.slope)) < 0)
		return r;
	gf_cfg_warn_unknown(L, e, prefix, band_keys, sizeof(band_keys) / sizeof(band_keys[0]),
			    "unknown band setting");
	static const char *const widths[] = {"q", "bandwidth_oct", "slope"};
	for (int k = 0; k < 3; k++) { /* 0 means "not given" to gf_peq_band_finish */
		const config_setting_t *s = config_setting_get_member(e, widths[k]);
		double x;
		if (s && gf_cfg_number_of(s, &x) == 0 && x == 0.0) {
			char name[224];
			snprintf(name, sizeof(name), "%s%s", prefix, widths[k]);
			return gf_cfg_fail_at(L, s, name, "must be above 0 (got 0)");
		}
	}
	struct gf_errbuf why = {{0}};
	if (gf_peq_band_finish(&b, &why))
		return band_error(L, e, prefix, why.msg);
	if ((r = gf_peq_add(p, &b, &why)) == GF_E_CONFIG)
		return gf_cfg_fail_at(L, e, "bands", "%s", why.msg);
	return r;
}

static int parse_bands(const struct gf_cfg_loader *L, const config_setting_t *bs, const char *prefix,
		       struct gf_config_filter *f)
{
	char name[200];
	snprintf(name, sizeof(name), "%sbands", prefix);
	int t = config_setting_type(bs);
	if (t != CONFIG_TYPE_LIST && t != CONFIG_TYPE_ARRAY)
		return gf_cfg_fail_at(L, bs, name, "must be a list of bands ( { ... }, ... ), not %s",
				      gf_cfg_type_name(bs));
	int n = config_setting_length(bs);
	if (n < 1)
		return gf_cfg_fail_at(L, bs, name, "is empty: give at least one band");
	for (int i = 0; i < n; i++) {
		int r = parse_band(L, config_setting_get_elem(bs, (unsigned)i), prefix, (unsigned)i, f->peq);
		if (r < 0)
			return r;
	}
	return 0;
}

/* file = "ParametricEQ.txt": read and parsed now (errors name its line), and watched. */
static int parse_peq_file(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
			  struct gf_config_filter *f)
{
	const config_setting_t *fs = config_setting_get_member(g, "file");
	char *rel = NULL, *buf = NULL, name[200];
	size_t len = 0;
	int r = gf_cfg_get_str(L, g, prefix, "file", &rel);
	if (r < 0)
		return r;
	f->file = gf_cfg_join_path(L->base_dir, rel);
	free(rel);
	if (!f->file)
		return GF_E_NOMEM;
	snprintf(name, sizeof(name), "%sfile", prefix);
	struct gf_errbuf why = {{0}};
	r = gf_file_read_all(f->file, "peq file", PEQ_TEXT_MAX_BYTES, &buf, &len, &why);
	if (!r)
		r = gf_peq_parse_text(buf, len, f->file, f->peq, &why);
	free(buf);
	if (r == GF_E_NOMEM)
		return r;
	if (r)
		return gf_cfg_fail_at(L, fs, name, "%s", why.msg);
	return gf_cfg_add_file(L->c, f->file);
}

int gf_cfg_parse_peq(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		     struct gf_config_filter *f)
{
	if (!(f->peq = calloc(1, sizeof(*f->peq))))
		return GF_E_NOMEM;
	f->design.peq = f->peq;
	const config_setting_t *bs = config_setting_get_member(g, "bands");
	const config_setting_t *fs = config_setting_get_member(g, "file");
	if (!bs == !fs) {
		char grp[200];
		snprintf(grp, sizeof(grp), "filters.%s", f->name);
		return gf_cfg_fail_at(
			L, g, grp,
			"a peq needs one of bands = ( { type = \"peaking\"; freq_hz = ...; gain_db = "
			"...; q = ...; } ) or file = \"ParametricEQ.txt\"");
	}
	int r = gf_cfg_get_num(L, g, prefix, "preamp_db", GF_PEQ_GAIN_DB_MIN, GF_PEQ_GAIN_DB_MAX,
			       &f->peq->preamp_db);
	if (r < 0)
		return r;
	return bs ? parse_bands(L, bs, prefix, f) : parse_peq_file(L, g, prefix, f);
}
