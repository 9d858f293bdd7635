/* Internal to the api folder: the two transports behind gf_api_server
 * (api_server.c): a Unix stream socket of JSON lines (api_unix.c) and a
 * WebSocket through libwebsockets (api_ws.c). Each fills poll entries and
 * services what poll found, a bounded amount per call. */
#ifndef GPUFIR_API_TRANSPORT_H
#define GPUFIR_API_TRANSPORT_H

#include <poll.h>

#include "api.h"

/* Accepted per service call and transport: a connection storm waits for later passes. */
#define GF_API_ACCEPTS_PER_PASS 8
/* Complete messages handled per client and pass, and bytes read per client and pass. */
#define GF_API_MSGS_PER_PASS 8
#define GF_API_READ_PER_PASS (64u * 1024u)
/* How soon the WebSocket wants another pass while lws holds input back. */
#define GF_API_WS_PENDING_MS 5
/* Reply bytes a client may leave unread before it is disconnected. */
#define GF_API_OUT_MAX (2u * GF_API_MAX_REPLY)

struct gf_api_unix;
int gf_api_unix_new(struct gf_api_unix **out, struct gf_api *a, const char *path, struct gf_errbuf *eb);
void gf_api_unix_free(struct gf_api_unix *u);
int gf_api_unix_pollfds(struct gf_api_unix *u, struct pollfd *fds, int max);
/* @return ms until it wants another pass (0: input is left for the next), or -1 */
int gf_api_unix_service(struct gf_api_unix *u, const struct pollfd *fds, int n);
unsigned gf_api_unix_clients(const struct gf_api_unix *u);
/* 1 while the socket file at its path is the one it bound. */
int gf_api_unix_bound(const struct gf_api_unix *u);
/* Clients with queued output not yet sent. */
unsigned gf_api_unix_unsent(const struct gf_api_unix *u);

struct gf_api_ws;
int gf_api_ws_new(struct gf_api_ws **out, struct gf_api *a, const struct gf_api_server_params *p,
		  struct gf_errbuf *eb);
void gf_api_ws_free(struct gf_api_ws *w);
int gf_api_ws_pollfds(struct gf_api_ws *w, struct pollfd *fds, int max);
/* @return ms until it wants another pass, or -1 */
int gf_api_ws_service(struct gf_api_ws *w, const struct pollfd *fds, int n);
unsigned gf_api_ws_clients(const struct gf_api_ws *w);
/* Clients with queued replies or a partly written frame. */
unsigned gf_api_ws_unsent(const struct gf_api_ws *w);

/* Who may use the WebSocket's port from a browser (api_origin.c): the names the daemon's own
 * page is served under, and the other pages' origins the config lists. */
struct gf_api_web_rules {
	char *address; /* control_address, as configured */
	int port;
	char **origins; /* control_allowed_origins */
	uint32_t n_origins;
};
int gf_api_web_rules_init(struct gf_api_web_rules *r, const struct gf_api_server_params *p);
void gf_api_web_rules_clear(struct gf_api_web_rules *r);
/* A request's Host header (NULL: none) names this daemon: a loopback name or address, the configured
 * address (with our port or none), or the host of an allowed origin. DNS rebinding fails here. */
int gf_api_host_ok(const struct gf_api_web_rules *r, const char *host);
/* A WebSocket's Origin header (NULL: none, a non-browser client) is the daemon's own page or an
 * allowed origin. A page of another site or port fails here. */
int gf_api_origin_ok(const struct gf_api_web_rules *r, const char *origin);

/* The page GET / serves on the WebSocket's port (api_page.c): static, @p len bytes. */
const char *gf_api_page(size_t *len);

/* The running filters' response plot (the ops' response_svg), or NULL: none. */
const char *gf_api_response_svg(struct gf_api *a, size_t *len);

/* The revents polled for @p fd among @p fds, 0 if it was not polled. Inline here, where both
 * transports read it, so that neither calls back into the server that polls them. */
static inline short gf_api_revents(const struct pollfd *fds, int n, int fd)
{
	for (int i = 0; fd >= 0 && i < n; i++)
		if (fds[i].fd == fd)
			return fds[i].revents;
	return 0;
}

#endif
