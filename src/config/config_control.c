/* The control API's settings (docs/api.md): control_socket (a path),
 * control_port (the WebSocket, off unless set) and control_address (where the
 * WebSocket listens: 127.0.0.1 unless set, so a non-loopback address is
 * always an explicit choice), control_key_file (where the control key is kept). */
#include "config_priv.h"

int gf_cfg_parse_control(const struct gf_cfg_loader *L, const config_setting_t *root)
{
	struct gf_config *c = L->c;
	long long port = 0;
	int r;
	if ((r = gf_cfg_get_str(L, root, "", "control_socket", &c->control_socket)) < 0 ||
	    (r = gf_cfg_get_str(L, root, "", "control_address", &c->control_address)) < 0 ||
	    (r = gf_cfg_get_str(L, root, "", "control_key_file", &c->control_key_file)) < 0 ||
	    (r = gf_cfg_get_int(L, root, "", "control_port", 0, 65535, &port)) < 0)
		return r;
	c->control_port = (int)port;
	return 0;
}
