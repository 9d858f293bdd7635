/*
 * Filter files per sample rate: `file = "room-$samplerate$.wav"` (CamillaDSP's
 * token) or `file = ( { rate = 44100; file = "a.wav"; }, ... )`. The build
 * takes the file for the rate it runs at (the device's live, the input's
 * offline) and says which.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_priv.h"

/* Rates whose token expansions are watched for reload when they exist. */
static const uint32_t common_rates[] = {8000,  11025, 16000,  22050,  32000,  44100, 48000,
					88200, 96000, 176400, 192000, 352800, 384000};

char *gf_cfg_expand_rate(const char *path, uint32_t rate)
{
	const size_t tl = strlen(GF_RATE_TOKEN);
	size_t n = 0;
	for (const char *p = strstr(path, GF_RATE_TOKEN); p; p = strstr(p + tl, GF_RATE_TOKEN))
		n++;
	char num[16];
	int nl = snprintf(num, sizeof(num), "%u", rate);
	char *out = malloc(strlen(path) + n * (size_t)nl + 1), *o = out;
	if (!out)
		return NULL;
	for (const char *p = path;;) {
		const char *t = strstr(p, GF_RATE_TOKEN);
		size_t len = t ? (size_t)(t - p) : strlen(p);
		memcpy(o, p, len);
		o += len;
		if (!t)
			break;
		memcpy(o, num, (size_t)nl);
		o += nl;
		p = t + tl;
	}
	*o = '\0';
	return out;
}

int gf_cfg_filter_file(const struct gf_config_filter *f, uint32_t rate, char **path, int *chosen,
		       struct gf_errbuf *eb)
{
	*chosen = 0;
	if (f->n_by_rate) {
		for (uint32_t i = 0; i < f->n_by_rate; i++) {
			if (f->by_rate[i].rate == rate) {
				*chosen = 1;
				return (*path = strdup(f->by_rate[i].file)) ? 0 : GF_E_NOMEM;
			}
		}
		char list[256] = "";
		size_t len = 0;
		for (uint32_t i = 0; i < f->n_by_rate && len < sizeof(list); i++)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%u", i ? ", " : "",
						f->by_rate[i].rate);
		gf_errbuf_set(eb, "no file for %u Hz (the list gives %s Hz)", rate, list);
		return GF_E_RATE;
	}
	*chosen = strstr(f->file, GF_RATE_TOKEN) != NULL;
	return (*path = gf_cfg_expand_rate(f->file, rate)) ? 0 : GF_E_NOMEM;
}

/* Watch the token's expansions that exist now, so that a reload sees them change. */
int gf_cfg_watch_rate_files(struct gf_config *c, const char *path)
{
	for (size_t i = 0; i < sizeof(common_rates) / sizeof(common_rates[0]); i++) {
		char *p = gf_cfg_expand_rate(path, common_rates[i]);
		if (!p)
			return GF_E_NOMEM;
		int r = access(p, R_OK) == 0 ? gf_cfg_add_file(c, p) : 0;
		free(p);
		if (r)
			return r;
	}
	return 0;
}

/* One entry { rate = 48000; file = "..."; } of a by-rate list. */
static int parse_entry(const struct gf_cfg_loader *L, const config_setting_t *e, const char *prefix,
		       struct gf_config_filter *f, struct gf_rate_file *out)
{
	char name[192];
	gf_cfg_setting(name, sizeof(name), prefix, "file");
	if (config_setting_type(e) != CONFIG_TYPE_GROUP)
		return gf_cfg_fail_at(L, e, name, "entries must be groups { rate = 48000; file = \"...\"; }");
	long long rate = 0;
	char *rel = NULL;
	int r = gf_cfg_get_int(L, e, prefix, "rate", GF_RATE_MIN, GF_RATE_MAX, &rate);
	if (r == 0)
		return gf_cfg_fail_at(L, e, name, "an entry without rate (give rate = 48000;)");
	if (r > 0)
		r = gf_cfg_get_str(L, e, prefix, "file", &rel);
	if (r == 0)
		return gf_cfg_fail_at(L, e, name, "an entry without file (give file = \"...\";)");
	if (r < 0)
		return r;
	for (uint32_t i = 0; i < f->n_by_rate; i++)
		if (f->by_rate[i].rate == (uint32_t)rate) {
			free(rel);
			return gf_cfg_fail_at(L, e, name, "two files for %lld Hz", rate);
		}
	out->rate = (uint32_t)rate;
	out->file = gf_cfg_join_path(L->base_dir, rel);
	free(rel);
	if (!out->file)
		return GF_E_NOMEM;
	if (access(out->file, R_OK) != 0)
		return gf_cfg_fail_at(L, e, name, "cannot read %s: %s", out->file, strerror(errno));
	return gf_cfg_add_file(L->c, out->file);
}

int gf_cfg_parse_rate_files(const struct gf_cfg_loader *L, const config_setting_t *list, const char *prefix,
			    struct gf_config_filter *f, char **first_rel)
{
	char name[192];
	gf_cfg_setting(name, sizeof(name), prefix, "file");
	int n = config_setting_length(list);
	if (n < 1)
		return gf_cfg_fail_at(L, list, name,
				      "an empty list: give ( { rate = 48000; file = \"...\"; } )");
	if (!(f->by_rate = calloc((size_t)n, sizeof(*f->by_rate))))
		return GF_E_NOMEM;
	for (int i = 0; i < n; i++) {
		int r = parse_entry(L, config_setting_get_elem(list, (unsigned)i), prefix, f,
				    &f->by_rate[f->n_by_rate]);
		if (f->by_rate[f->n_by_rate].file)
			f->n_by_rate++;
		if (r < 0)
			return r;
	}
	/* the first entry's name chooses the kind (text, sound, raw) as a plain file's would */
	const char *s = NULL;
	config_setting_lookup_string(config_setting_get_elem(list, 0), "file", &s);
	return (*first_rel = strdup(s ? s : "")) ? 0 : GF_E_NOMEM;
}
