/*
 * The phase settings: a filter's `phase` and the top-level `phase` that
 * applies to each channel's pre-convolved chain.
 */
#include <stdlib.h>
#include <string.h>

#include "config_priv.h"

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
