/* The settings of the control interfaces: the live volume's (volume_db,
 * volume_limit_db, state_file), and the control API's (docs/api.md): control_socket (a path),
 * control_port (the WebSocket, off unless set), control_address (where the
 * WebSocket listens: 127.0.0.1 unless set, so a non-loopback address is
 * always an explicit choice), control_key_file (where the control key is kept) and
 * control_allowed_origins (the web pages besides the daemon's own that may use the
 * WebSocket). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_priv.h"

/* More would be a list of every page on a network, which is no longer a check. */
#define MAX_ORIGINS 16
/* A DNS name's limit, with scheme and port. */
#define MAX_ORIGIN_LEN 280

/* Why @p o is not an origin as a browser sends it ("http://host[:port]"), or NULL. */
static const char *origin_error(const char *o)
{
	if (strcmp(o, "*") == 0 || strcasecmp(o, "null") == 0)
		return "must name one origin; \"*\" and \"null\" would let any page in";
	if (strlen(o) > MAX_ORIGIN_LEN)
		return "is longer than an origin can be";
	size_t k = strncmp(o, "http://", 7) == 0 ? 7 : strncmp(o, "https://", 8) == 0 ? 8 : 0;
	if (!k)
		return "must start with http:// or https://";
	const char *h = o + k, *e;
	if (*h == '[') { /* an IPv6 address */
		e = h + 1 + strspn(h + 1, "0123456789abcdefABCDEF:.");
		if (*e != ']' || e == h + 1)
			return "has an unclosed or empty [IPv6 address]";
		e++;
	} else {
		e = h;
		while (isalnum((unsigned char)*e) || *e == '.' || *e == '-')
			e++;
		if (e == h)
			return "has no host name";
	}
	if (*e == ':') {
		char *end;
		long port = strtol(e + 1, &end, 10);
		if (end == e + 1 || port < 1 || port > 65535)
			return "has a port that is not 1..65535";
		if (port == (k == 7 ? 80 : 443))
			return "names the scheme's default port, which browsers leave out: write it without";
		e = end;
	}
	return *e ? "must be scheme://host[:port], with no path, query or trailing slash" : NULL;
}

static int parse_origins(const struct gf_cfg_loader *L, const config_setting_t *root)
{
	static const char key[] = "control_allowed_origins";
	struct gf_config *c = L->c;
	const config_setting_t *a = config_setting_get_member(root, key);
	if (!a)
		return 0;
	int t = config_setting_type(a);
	if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST)
		return gf_cfg_fail_at(L, a, key, "must be an array of origins [\"http://host:port\"], not %s",
				      gf_cfg_type_name(a));
	int n = config_setting_length(a);
	if (n > MAX_ORIGINS)
		return gf_cfg_fail_at(L, a, key, "has %d origins; at most %d", n, MAX_ORIGINS);
	if (!(c->control_allowed_origins = calloc((size_t)n + 1, sizeof(char *))))
		return GF_E_NOMEM;
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(a, (unsigned)i);
		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return gf_cfg_fail_at(L, e, key, "element %d must be an origin (a string), not %s", i,
					      gf_cfg_type_name(e));
		const char *o = config_setting_get_string(e), *why = origin_error(o);
		if (why)
			return gf_cfg_fail_at(L, e, key, "\"%.80s\" %s", o, why);
		if (!(c->control_allowed_origins[i] = strdup(o)))
			return GF_E_NOMEM;
		c->n_control_allowed_origins = (uint32_t)i + 1;
	}
	return 0;
}

int gf_cfg_parse_control(const struct gf_cfg_loader *L, const config_setting_t *root)
{
	struct gf_config *c = L->c;
	long long port = 0;
	int r;
	if ((r = gf_cfg_get_str(L, root, "", "control_socket", &c->control_socket)) < 0 ||
	    (r = gf_cfg_get_str(L, root, "", "control_address", &c->control_address)) < 0 ||
	    (r = gf_cfg_get_str(L, root, "", "control_key_file", &c->control_key_file)) < 0 ||
	    (r = gf_cfg_get_int(L, root, "", "control_port", 0, 65535, &port)) < 0 ||
	    (r = parse_origins(L, root)) < 0)
		return r;
	c->control_port = (int)port;
	return 0;
}

/* The live volume's settings: volume_db (start-up volume), volume_limit_db
 * (the most any request gets) and state_file (where the daemon keeps the last
 * volume and mute across restarts). */
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
