/* Internal to api_ws.c and api_ws_http.c: the WebSocket transport's
 * connections (libwebsockets on descriptors the daemon polls) and the plain
 * HTTP requests they may carry before an upgrade. Control thread only. */
#ifndef GPUFIR_API_WS_INTERNAL_H
#define GPUFIR_API_WS_INTERNAL_H

#include <libwebsockets.h>
#include <stdint.h>
#include <sys/socket.h>

#include "api_transport.h"

struct wclient {
	struct lws *wsi; /* NULL: free */
	int fd;
	char *in;
	size_t in_len;
	int too_big;
	char *q[GF_API_MAX_QUEUED]; /* replies, each with LWS_PRE bytes before the text */
	size_t qlen[GF_API_MAX_QUEUED];
	unsigned qhead, qn;
	int drop;
	unsigned char *body; /* an HTTP answer's body to write, LWS_PRE bytes before it, or NULL */
	size_t body_len;
	struct sockaddr_storage peer; /* its address (the port zeroed): the per-peer cap's key */
	int ws;			      /* upgraded to a WebSocket */
	int64_t since_ms;	      /* since when it owes a whole request/message (0: owes nothing) */
	int pinged;		      /* a ping went out for it (its pong is the answer) */
	int ping_due;		      /* a ping to write when the socket is writable */
	struct gf_api_ws *w;
};

struct gf_api_ws {
	struct gf_api *a;
	int fd;
	int beyond_loopback; /* its clients must Authenticate first */
	struct lws_context *ctx;
	struct lws_vhost *vh;
	struct gf_api_web_rules rules;
	int64_t probed_ms; /* when the quiet clients were last pinged for a newcomer without room */
	int64_t handshake_ms, partial_ms; /* GF_API_HANDSHAKE_MS and GF_API_PARTIAL_MS, or a test's */
	struct wclient c[GF_API_MAX_CLIENTS];
};

/* The request on @p c may not go on (api_origin.c's rules; @p upgrade: a WebSocket upgrade, whose
 * Origin counts too): it was answered 421 or 403. @return 0 when it may go on, else -1 (close) */
int gf_api_ws_refused(struct wclient *c, struct lws *wsi, int upgrade);
/* LWS_CALLBACK_HTTP: answer the request for @p uri. @return 0, or -1 to close */
int gf_api_ws_on_http(struct wclient *c, struct lws *wsi, const char *uri);
/* LWS_CALLBACK_HTTP_WRITEABLE: the answer's body. @return 0, or -1 to close */
int gf_api_ws_on_http_writable(struct wclient *c, struct lws *wsi);

#endif
