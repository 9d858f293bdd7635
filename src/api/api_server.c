/* The control API's server: the Unix socket and, when configured, the
 * WebSocket, both serving one gf_api. Polled from the daemon's control loop. */
#include <stdlib.h>

#include "api_transport.h"
#include "clock.h"

struct gf_api_server {
	struct gf_api *a;
	struct gf_api_unix *u;
	struct gf_api_ws *w;
};

int gf_api_server_new(struct gf_api_server **out, struct gf_api *a, const struct gf_api_server_params *p,
		      struct gf_errbuf *eb)
{
	struct gf_api_server *s = calloc(1, sizeof(*s));
	*out = NULL;
	if (!s)
		return GF_E_NOMEM;
	s->a = a;
	int err = 0;
	if (p->unix_path)
		err = gf_api_unix_new(&s->u, a, p->unix_path, eb);
	if (!err && p->port)
		err = gf_api_ws_new(&s->w, a, p, eb);
	if (err) {
		gf_api_server_free(s);
		return err;
	}
	*out = s;
	return 0;
}

void gf_api_server_free(struct gf_api_server *s)
{
	if (!s)
		return;
	gf_api_unix_free(s->u);
	gf_api_ws_free(s->w);
	free(s);
}

int gf_api_server_pollfds(struct gf_api_server *s, struct pollfd *fds, int max)
{
	int n = s->u ? gf_api_unix_pollfds(s->u, fds, max) : 0;
	return n + (s->w ? gf_api_ws_pollfds(s->w, fds + n, max - n) : 0);
}

int gf_api_server_service(struct gf_api_server *s, const struct pollfd *fds, int n)
{
	int t = gf_api_tick(s->a, gf_now_ms());
	int tu = s->u ? gf_api_unix_service(s->u, fds, n) : -1;
	int tw = s->w ? gf_api_ws_service(s->w, fds, n) : -1;
	t = tu >= 0 && (t < 0 || tu < t) ? tu : t;
	return tw >= 0 && (t < 0 || tw < t) ? tw : t;
}

unsigned gf_api_server_clients(const struct gf_api_server *s)
{
	return gf_api_unix_clients(s->u) + gf_api_ws_clients(s->w);
}

unsigned gf_api_server_unsent(const struct gf_api_server *s)
{
	return gf_api_unix_unsent(s->u) + gf_api_ws_unsent(s->w);
}

int gf_api_server_bound(const struct gf_api_server *s)
{
	return !s->u || gf_api_unix_bound(s->u);
}
