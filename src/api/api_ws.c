/* The WebSocket transport (libwebsockets), the protocol of api_proto.c in
 * text frames. The listening socket is this file's own (on the configured
 * address only: loopback unless set otherwise), and each accepted socket is
 * handed to lws (lws_adopt_socket_vhost), so every descriptor is known here
 * and goes into the daemon's poll set; what poll() finds is handed to lws
 * with lws_service_fd(), and lws_service() with a negative timeout then does
 * the work lws keeps pending, without a poll() of its own.
 * Bounded like the Unix socket: a message over GF_API_MAX_MSG closes the
 * connection (1009, "message too big"), a client with GF_API_MAX_QUEUED
 * replies unsent is dropped, and one past GF_API_MAX_CLIENTS is closed.
 * Plain HTTP on the same port gets the control page (api_page.c) at GET /,
 * the running filters' response plot at GET /response.svg, and a 404
 * elsewhere: never a file. */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <stdio.h>
#include <libwebsockets.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api_transport.h"
#include "log.h"

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
	struct gf_api_ws *w;
};

struct gf_api_ws {
	struct gf_api *a;
	int fd;
	int beyond_loopback; /* its clients must Authenticate first */
	struct lws_context *ctx;
	struct lws_vhost *vh;
	struct wclient c[GF_API_MAX_CLIENTS];
};

static struct wclient *find(struct gf_api_ws *w, struct lws *wsi)
{
	for (unsigned i = 0; w && i < GF_API_MAX_CLIENTS; i++)
		if (w->c[i].wsi == wsi)
			return &w->c[i];
	return NULL;
}

static void client_clear(struct wclient *c)
{
	gf_api_client_gone(c->w->a, c);
	free(c->in);
	for (unsigned i = 0; i < c->qn; i++)
		free(c->q[(c->qhead + i) % GF_API_MAX_QUEUED]);
	free(c->body);
	struct gf_api_ws *w = c->w;
	*c = (struct wclient){.fd = -1, .w = w};
}

static void ws_send(void *client, const char *text, size_t len)
{
	struct wclient *c = client;
	if (!c->wsi || c->drop)
		return;
	if (c->qn == GF_API_MAX_QUEUED) { /* not reading: drop it, at once (it may never be writable) */
		c->drop = 1;
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_REASON_BASE, LWS_TO_KILL_ASYNC);
		return;
	}
	char *b = malloc(LWS_PRE + len);
	if (!b) {
		c->drop = 1;
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_REASON_BASE, LWS_TO_KILL_ASYNC);
		return;
	}
	memcpy(b + LWS_PRE, text, len);
	unsigned k = (c->qhead + c->qn++) % GF_API_MAX_QUEUED;
	c->q[k] = b;
	c->qlen[k] = len;
	lws_callback_on_writable(c->wsi);
}

static int on_receive(struct wclient *c, struct lws *wsi, const char *in, size_t len)
{
	if (lws_frame_is_binary(wsi)) {
		static const char msg[] = "binary frames are not commands";
		lws_close_reason(wsi, LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE, (unsigned char *)msg,
				 sizeof(msg) - 1);
		return -1;
	}
	if (c->in_len + len > GF_API_MAX_MSG) {
		static const char msg[] = "message too big";
		lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, (unsigned char *)msg,
				 sizeof(msg) - 1);
		return -1;
	}
	if (!c->in && !(c->in = malloc(GF_API_MAX_MSG)))
		return -1;
	memcpy(c->in + c->in_len, in, len);
	c->in_len += len;
	if (lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi)) {
		gf_api_handle(c->w->a, c, ws_send, c->in, c->in_len);
		c->in_len = 0;
	}
	return 0;
}

static int on_writable(struct wclient *c, struct lws *wsi)
{
	if (c->drop)
		return -1;
	if (!c->qn)
		return 0;
	unsigned k = c->qhead;
	int w = lws_write(wsi, (unsigned char *)c->q[k] + LWS_PRE, c->qlen[k], LWS_WRITE_TEXT);
	free(c->q[k]);
	c->q[k] = NULL;
	c->qhead = (c->qhead + 1) % GF_API_MAX_QUEUED;
	c->qn--;
	if (w < 0)
		return -1;
	if (c->qn)
		lws_callback_on_writable(wsi);
	return 0;
}

/* Plain HTTP on the WebSocket's port: GET / is the page (api_page.c), GET /response.svg the
 * running filters' response (the daemon's, drawn at its build); any other path or method gets a
 * 404 or 405. The body is copied now, so that a reload before the socket is writable cannot
 * change it under the Content-Length already sent. */
static int on_http(struct wclient *c, struct lws *wsi, const char *uri)
{
	int get = lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0;
	const char *body = NULL, *type = NULL;
	size_t len = 0;
	if (get && strcmp(uri, "/") == 0) {
		body = gf_api_page(&len);
		type = "text/html; charset=utf-8";
	} else if (get && strcmp(uri, "/response.svg") == 0) {
		body = gf_api_response_svg(c->w->a, &len);
		type = "image/svg+xml";
	}
	if (!body) {
		lws_return_http_status(wsi, get ? HTTP_STATUS_NOT_FOUND : HTTP_STATUS_METHOD_NOT_ALLOWED,
				       NULL);
		return lws_http_transaction_completed(wsi) ? -1 : 0;
	}
	/* lws_write wants LWS_PRE bytes of room before what it sends; it keeps what the
	 * socket does not take and sends it as the socket drains. */
	free(c->body); /* lws starts a request once the previous one completed: none is left */
	if (!(c->body = malloc(LWS_PRE + len)))
		return -1;
	memcpy(c->body + LWS_PRE, body, len);
	c->body_len = len;
	unsigned char buf[LWS_PRE + 512], *start = buf + LWS_PRE, *p = start, *end = buf + sizeof(buf) - 1;
	static const char nostore[] = "no-store";
	if (lws_add_http_common_headers(wsi, HTTP_STATUS_OK, type, len, &p, end) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL, (const unsigned char *)nostore,
					 sizeof(nostore) - 1, &p, end) ||
	    lws_finalize_write_http_header(wsi, start, &p, end))
		return -1;
	lws_callback_on_writable(wsi);
	return 0;
}

static int on_http_writable(struct wclient *c, struct lws *wsi)
{
	if (!c->body)
		return 0;
	unsigned char *b = c->body;
	size_t len = c->body_len;
	c->body = NULL;
	int w = lws_write(wsi, b + LWS_PRE, len, LWS_WRITE_HTTP_FINAL);
	free(b);
	if (w != (int)len)
		return -1;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct gf_api_ws *w = lws_context_user(lws_get_context(wsi));
	struct wclient *c = find(w, wsi);
	switch (reason) {
	case LWS_CALLBACK_RECEIVE:
		return c ? on_receive(c, wsi, in, len) : -1;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return c ? on_writable(c, wsi) : -1;
	case LWS_CALLBACK_HTTP:
		return c ? on_http(c, wsi, in) : -1;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return c ? on_http_writable(c, wsi) : -1;
	case LWS_CALLBACK_WSI_DESTROY:
		if (c)
			client_clear(c);
		return 0;
	default:
		return 0;
	}
}

static const struct lws_protocols protocols[] = {
	{"gpufir", callback, 0, 4096, 0, NULL, 0},
	{NULL, NULL, 0, 0, 0, NULL, 0},
};

static int listen_tcp(const char *address, int port, struct gf_errbuf *eb)
{
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_PASSIVE | AI_NUMERICSERV,
				 .ai_socktype = SOCK_STREAM},
			*ai = NULL;
	char ps[16];
	snprintf(ps, sizeof(ps), "%d", port);
	int r = getaddrinfo(address, ps, &hints, &ai);
	if (r != 0) {
		gf_errbuf_set(eb, "control_address '%s': not a numeric IPv4 or IPv6 address (%s)", address,
			      gai_strerror(r));
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 16) != 0) {
		gf_errbuf_set(eb, "control WebSocket on %s port %d: %s", address, port, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/* 127.0.0.0/8, ::1 or ::ffff:127.x.y.z: only this machine reaches it. */
static int listens_on_loopback(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return 0;
	if (ss.ss_family == AF_INET)
		return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss.ss_family != AF_INET6)
		return 0;
	const struct in6_addr *a6 = &((struct sockaddr_in6 *)&ss)->sin6_addr;
	return IN6_IS_ADDR_LOOPBACK(a6) || (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
}

int gf_api_ws_new(struct gf_api_ws **out, struct gf_api *a, const char *address, int port,
		  struct gf_errbuf *eb)
{
	*out = NULL;
	if (port <= 0 || port > 65535) {
		gf_errbuf_set(eb, "control_port %d: not 1 to 65535", port);
		return GF_E_INVAL;
	}
	struct gf_api_ws *w = calloc(1, sizeof(*w));
	if (!w)
		return GF_E_NOMEM;
	w->a = a;
	for (unsigned i = 0; i < GF_API_MAX_CLIENTS; i++)
		w->c[i] = (struct wclient){.fd = -1, .w = w};
	if ((w->fd = listen_tcp(address ? address : GF_API_DEFAULT_ADDRESS, port, eb)) < 0) {
		free(w);
		return GF_E_SYSTEM;
	}
	w->beyond_loopback = !listens_on_loopback(w->fd);
	lws_set_log_level(LLL_ERR, NULL);
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN_SERVER; /* our socket: only adopted connections */
	info.protocols = protocols;
	info.user = w;
	info.gid = (gid_t)-1;
	info.uid = (uid_t)-1;
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
	if (!(w->ctx = lws_create_context(&info)) || !(w->vh = lws_create_vhost(w->ctx, &info))) {
		gf_errbuf_set(eb, "control WebSocket: libwebsockets could not start");
		gf_api_ws_free(w);
		return GF_E_SYSTEM;
	}
	*out = w;
	return 0;
}

void gf_api_ws_free(struct gf_api_ws *w)
{
	if (!w)
		return;
	if (w->ctx)
		lws_context_destroy(w->ctx); /* closes every connection (WSI_DESTROY clears its client) */
	for (unsigned i = 0; i < GF_API_MAX_CLIENTS; i++)
		if (w->c[i].wsi)
			client_clear(&w->c[i]);
	if (w->fd >= 0)
		close(w->fd);
	free(w);
}

static void accept_some(struct gf_api_ws *w)
{
	for (int k = 0; k < GF_API_ACCEPTS_PER_PASS; k++) {
		int fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct wclient *c = NULL;
		for (unsigned i = 0; i < GF_API_MAX_CLIENTS && !c; i++)
			if (!w->c[i].wsi)
				c = &w->c[i];
		if (!c) {
			gf_debug("control WebSocket: over %u connections, one refused", GF_API_MAX_CLIENTS);
			close(fd); /* over the cap: refused */
			continue;
		}
		if (gf_api_client_standing(w->a, c, w->beyond_loopback ? GF_API_LOCKED : GF_API_GUEST)) {
			close(fd); /* it would be served unlocked */
			continue;
		}
		c->fd = fd;
		c->wsi = lws_adopt_socket_vhost(w->vh, fd);
		gf_debug("control WebSocket: connection %d (slot %u)", fd, (unsigned)(c - w->c));
		if (!c->wsi) {
			gf_warn("control WebSocket: libwebsockets did not take a connection (fd %d)", fd);
			c->fd = -1;
			close(fd);
		}
	}
}

int gf_api_ws_pollfds(struct gf_api_ws *w, struct pollfd *fds, int max)
{
	int n = 0;
	if (n < max)
		fds[n++] = (struct pollfd){.fd = w->fd, .events = POLLIN};
	for (unsigned i = 0; i < GF_API_MAX_CLIENTS && n < max; i++) {
		struct wclient *c = &w->c[i];
		if (c->wsi)
			fds[n++] = (struct pollfd){
				.fd = c->fd,
				.events = (short)(POLLIN |
						  (c->qn || c->body || lws_partial_buffered(c->wsi) ? POLLOUT
												    : 0))};
	}
	return n;
}

int gf_api_ws_service(struct gf_api_ws *w, const struct pollfd *fds, int n)
{
	if (gf_api_revents(fds, n, w->fd))
		accept_some(w);
	/* What our poll() found, handed to lws descriptor by descriptor (lws's own
	 * poll is never run: it would not see these descriptors' events). */
	for (unsigned i = 0; i < GF_API_MAX_CLIENTS; i++) {
		struct wclient *c = &w->c[i];
		short re = c->wsi ? gf_api_revents(fds, n, c->fd) : 0;
		if (!re)
			continue;
		struct lws_pollfd p = {.fd = c->fd, .events = POLLIN | POLLOUT, .revents = re};
		lws_service_fd(w->ctx, &p); /* may close it: its client is cleared (WSI_DESTROY) */
	}
	/* Then its timers (a close handshake that never ends) and the work it keeps
	 * pending (buffered input, close frames): a negative timeout skips its poll. */
	lws_service(w->ctx, -1);
	/* Input lws holds back (one frame at a time) needs another pass soon, not at
	 * the loop's next wake-up; a few ms, so that a client lws cannot finish with
	 * never makes the loop spin. */
	return lws_service_adjust_timeout(w->ctx, 1, 0) == 0 ? GF_API_WS_PENDING_MS : -1;
}

unsigned gf_api_ws_clients(const struct gf_api_ws *w)
{
	unsigned n = 0;
	for (unsigned i = 0; w && i < GF_API_MAX_CLIENTS; i++)
		n += w->c[i].wsi != NULL;
	return n;
}

unsigned gf_api_ws_unsent(const struct gf_api_ws *w)
{
	unsigned n = 0;
	for (unsigned i = 0; w && i < GF_API_MAX_CLIENTS; i++)
		n += w->c[i].wsi && !w->c[i].drop && (w->c[i].qn || lws_partial_buffered(w->c[i].wsi));
	return n;
}
