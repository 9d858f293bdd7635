/* The live volume's settings: volume_db (start-up volume), volume_limit_db
 * (the most any request gets) and state_file (where the daemon keeps the last
 * volume and mute across restarts). */
#include <libconfig.h>

#include "config.h"
#include "config_priv.h"

int gf_cfg_parse_volume(const struct gf_cfg_loader *L, const config_setting_t *root)
{
	struct gf_config *c = L->c;
	int r;
	if ((r = gf_cfg_get_num(L, root, "", "volume_limit_db", GF_VOLUME_MIN_DB, GF_VOLUME_MAX_DB,
				&c->volume_limit_db)) < 0)
		return r;
	if ((r = gf_cfg_get_num(L, root, "", "volume_db", GF_VOLUME_MIN_DB, GF_VOLUME_MAX_DB,
				&c->volume_db)) < 0)
		return r;
	if (r && c->volume_db > c->volume_limit_db)
		return gf_cfg_fail_at(L, config_setting_get_member(root, "volume_db"), "volume_db",
				      "%g dB is above volume_limit_db (%g dB)", c->volume_db,
				      c->volume_limit_db);
	return gf_cfg_get_str(L, root, "", "state_file", &c->state_file) < 0 ? GF_E_CONFIG : 0;
}
