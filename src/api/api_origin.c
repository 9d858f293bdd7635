/* Who may use the WebSocket's port from a web browser (docs/api.md, "Who may
 * connect"). A browser lets any page it shows open ws://127.0.0.1:PORT/ and
 * send commands, and through DNS rebinding (a name of the attacker's that
 * resolves to 127.0.0.1) even read the answers. Two headers stop both: Host
 * must name this daemon (a rebound page's requests carry the attacker's
 * name), and a WebSocket's Origin must be the daemon's own page or one the
 * config lists (a browser always sends it, and a page cannot forge it).
 * Clients that are not browsers send no Origin and are let in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api_transport.h"

/* The names the daemon's own page is served under, besides control_address. */
static const char *const loopback[] = {"localhost", "127.0.0.1", "::1"};

int gf_api_web_rules_init(struct gf_api_web_rules *r, const struct gf_api_server_params *p)
{
	*r = (struct gf_api_web_rules){.port = p->port};
	if (!(r->address = strdup(p->address ? p->address : GF_API_DEFAULT_ADDRESS)))
		return GF_E_NOMEM;
	if (p->n_allowed_origins && !(r->origins = calloc(p->n_allowed_origins, sizeof(char *))))
		return GF_E_NOMEM;
	for (uint32_t i = 0; i < p->n_allowed_origins; i++) {
		if (!(r->origins[i] = strdup(p->allowed_origins[i])))
			return GF_E_NOMEM;
		r->n_origins = i + 1;
	}
	return 0;
}

void gf_api_web_rules_clear(struct gf_api_web_rules *r)
{
	for (uint32_t i = 0; i < r->n_origins; i++)
		free(r->origins[i]);
	free(r->origins);
	free(r->address);
	*r = (struct gf_api_web_rules){0};
}

/* @p name (@p len bytes, brackets of an IPv6 address removed) is loopback or control_address. */
static int own_name(const struct gf_api_web_rules *r, const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(loopback) / sizeof(loopback[0]); i++)
		if (strlen(loopback[i]) == len && strncasecmp(name, loopback[i], len) == 0)
			return 1;
	return strlen(r->address) == len && strncasecmp(name, r->address, len) == 0;
}

/* @p auth ("host", "host:port", "[v6]" or "[v6]:port") names this daemon on its port. A missing port
 * is the scheme's default: right only where @p default_port is ours. */
static int own_authority(const struct gf_api_web_rules *r, const char *auth, int default_port)
{
	const char *name = auth, *end;
	if (*auth == '[') {
		name = auth + 1;
		if (!(end = strchr(name, ']')))
			return 0;
	} else {
		end = name + strcspn(name, ":");
	}
	const char *rest = end + (*auth == '[');
	if (!own_name(r, name, (size_t)(end - name)))
		return 0;
	if (!*rest)
		return default_port == r->port;
	char *e;
	long port = strtol(rest + 1, &e, 10);
	return *rest == ':' && e != rest + 1 && !*e && port == r->port;
}

/* @p auth is the host[:port] of an allowed origin (a proxy in front of the daemon passes it on). */
static int allowed_authority(const struct gf_api_web_rules *r, const char *auth)
{
	for (uint32_t i = 0; i < r->n_origins; i++) {
		const char *o = strstr(r->origins[i], "://");
		if (o && strcasecmp(o + 3, auth) == 0)
			return 1;
	}
	return 0;
}

int gf_api_host_ok(const struct gf_api_web_rules *r, const char *host)
{
	/* A Host without a port came through a proxy or by hand, never from a page on our port
	 * (a browser names a non-default port); it still has to name this daemon. */
	return host && *host && (own_authority(r, host, r->port) || allowed_authority(r, host));
}

int gf_api_origin_ok(const struct gf_api_web_rules *r, const char *origin)
{
	if (!origin)
		return 1;
	for (uint32_t i = 0; i < r->n_origins; i++)
		if (strcasecmp(origin, r->origins[i]) == 0)
			return 1;
	return strncasecmp(origin, "http://", 7) == 0 && own_authority(r, origin + 7, 80);
}
