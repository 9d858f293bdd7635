/* The WebSocket transport (libwebsockets), the protocol of api_proto.c in
 * text frames. The listening socket is this file's own (on the configured
 * address only: loopback unless set otherwise), and each accepted socket is
 * handed to lws (lws_adopt_socket_vhost), so every descriptor is known here
 * and goes into the daemon's poll set; what poll() finds is handed to lws
 * with lws_service_fd(), and lws_service() with a negative timeout then does
 * the work lws keeps pending, without a poll() of its own.
 * Bounded like the Unix socket: a message over GF_API_MAX_MSG closes the
 * connection (1009, "message too big"), a client with GF_API_MAX_QUEUED
 * replies unsent is dropped, and one past GF_API_MAX_CLIENTS (or past
 * GF_API_MAX_PER_PEER from one address) is closed. Slots are not held by
 * clients that stall: a connection with no whole request after
 * GF_API_HANDSHAKE_MS, and a WebSocket whose input makes no whole message for
 * GF_API_PARTIAL_MS and that then does not answer a ping as long, are closed;
 * when the table is full every quiet WebSocket is pinged likewise.
 * Requests from browsers must name this daemon in Host and, for the
 * WebSocket, come from its own page or an allowed origin (api_origin.c): a
 * refusal (421, 403) comes before any command runs.
 * Plain HTTP on the same port, and those rules, are api_ws_http.c's. */
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

#include "api_ws_internal.h"
#include "clock.h"
#include "log.h"
#include "test_hook.h"

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

/* Close @p c's connection at the next service (from outside its callbacks, too). */
static void kill_soon(struct wclient *c)
{
	c->drop = 1;
	lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_REASON_BASE, LWS_TO_KILL_ASYNC);
}

/* It sent what it owed (a whole message, a pong, a request): nothing is due from it. */
static void owes_nothing(struct wclient *c)
{
	c->since_ms = 0;
	c->pinged = 0;
}

static void ws_send(void *client, const char *text, size_t len)
{
	struct wclient *c = client;
	if (!c->wsi || c->drop)
		return;
	char *b = c->qn < GF_API_MAX_QUEUED ? malloc(LWS_PRE + len) : NULL;
	if (!b) { /* not reading (or no memory): drop it, at once (it may never be writable) */
		kill_soon(c);
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
		owes_nothing(c);
		gf_api_handle(c->w->a, c, ws_send, c->in, c->in_len);
		c->in_len = 0;
	}
	return 0;
}

static int on_writable(struct wclient *c, struct lws *wsi)
{
	if (c->drop)
		return -1;
	if (c->ping_due) {
		unsigned char ping[LWS_PRE + 1];
		c->ping_due = 0;
		if (lws_write(wsi, ping + LWS_PRE, 0, LWS_WRITE_PING) < 0)
			return -1;
		if (c->qn)
			lws_callback_on_writable(wsi);
		return 0;
	}
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
		return c ? gf_api_ws_on_http(c, wsi, in) : -1;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return c ? gf_api_ws_on_http_writable(c, wsi) : -1;
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		return c ? gf_api_ws_refused(c, wsi, 1) : -1;
	case LWS_CALLBACK_ESTABLISHED:
		if (c) {
			c->ws = 1;
			owes_nothing(c);
		}
		return c ? 0 : -1;
	case LWS_CALLBACK_RECEIVE_PONG:
		if (c)
			owes_nothing(c);
		return 0;
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

int gf_api_ws_new(struct gf_api_ws **out, struct gf_api *a, const struct gf_api_server_params *p,
		  struct gf_errbuf *eb)
{
	const char *address = p->address ? p->address : GF_API_DEFAULT_ADDRESS;
	int port = p->port;
	*out = NULL;
	if (port <= 0 || port > 65535) {
		gf_errbuf_set(eb, "control_port %d: not 1 to 65535", port);
		return GF_E_INVAL;
	}
	struct gf_api_ws *w = calloc(1, sizeof(*w));
	if (!w)
		return GF_E_NOMEM;
	w->a = a;
	w->fd = -1;
	/* The hostile-client tests wait these out several times: 5 s each is time, not work. */
	int64_t t = gf_test_hook_value("GPUFIR_TEST_API_TIMEOUT_MS", "api");
	w->handshake_ms = t > 0 ? t : GF_API_HANDSHAKE_MS;
	w->partial_ms = t > 0 ? t : GF_API_PARTIAL_MS;
	for (unsigned i = 0; i < GF_API_MAX_CLIENTS; i++)
		w->c[i] = (struct wclient){.fd = -1, .w = w};
	if (gf_api_web_rules_init(&w->rules, p) != 0) {
		gf_api_ws_free(w);
		return GF_E_NOMEM;
	}
	if ((w->fd = listen_tcp(address, port, eb)) < 0) {
		gf_api_ws_free(w);
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
	gf_api_web_rules_clear(&w->rules);
	free(w);
}

/* The peer's address alone: its port differs on every connection. */
static void peer_address(struct sockaddr_storage *sa)
{
	if (sa->ss_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = 0;
	else if (sa->ss_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = 0;
}

/* A free slot for a connection from @p peer, or NULL: the table is full or the peer has its share. */
static struct wclient *slot_for(struct gf_api_ws *w, const struct sockaddr_storage *peer)
{
	struct wclient *c = NULL;
	unsigned same = 0;
	for (unsigned i = 0; i < GF_API_MAX_CLIENTS; i++) {
		if (!w->c[i].wsi)
			c = c ? c : &w->c[i];
		else
			same += memcmp(&w->c[i].peer, peer, sizeof(*peer)) == 0;
	}
	return same < GF_API_MAX_PER_PEER ? c : NULL;
}

/* A newcomer found no room: every WebSocket that owes nothing and may be long gone (a peer that
 * vanished, or one that holds the slot on purpose) gets a ping it must answer within
 * GF_API_PARTIAL_MS, at most once per that time, so a full table frees what is dead. */
static void probe_quiet(struct gf_api_ws *w, int64_t now)
{
	if (now - w->probed_ms < w->partial_ms)
		return;
	w->probed_ms = now;
	for (unsigned i = 0; i < GF_API_MAX_CLIENTS; i++)
		if (w->c[i].wsi && w->c[i].ws && !w->c[i].since_ms)
			w->c[i].since_ms = now - w->partial_ms; /* due for its ping now */
}

static void accept_some(struct gf_api_ws *w)
{
	for (int k = 0; k < GF_API_ACCEPTS_PER_PASS; k++) {
		struct sockaddr_storage peer = {0};
		socklen_t plen = sizeof(peer);
		int fd = accept4(w->fd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		peer_address(&peer);
		struct wclient *c = slot_for(w, &peer);
		if (!c) {
			gf_debug("control WebSocket: no room (%u connections, %u per address), one refused",
				 GF_API_MAX_CLIENTS, GF_API_MAX_PER_PEER);
			close(fd); /* over the cap: refused */
			probe_quiet(w, gf_now_ms());
			continue;
		}
		if (gf_api_client_standing(w->a, c, w->beyond_loopback ? GF_API_LOCKED : GF_API_GUEST)) {
			close(fd); /* it would be served unlocked */
			continue;
		}
		c->fd = fd;
		c->peer = peer;
		c->since_ms = gf_now_ms(); /* its request is due within GF_API_HANDSHAKE_MS */
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
				.events = (short)(POLLIN | (c->qn || c->body || c->ping_due ||
									    lws_partial_buffered(c->wsi)
								    ? POLLOUT
								    : 0))};
	}
	return n;
}

/* What @p c owes is overdue: a WebSocket is pinged once, then closed; any other connection is
 * closed. @return ms until its next deadline, or -1: none */
static int deadline(struct wclient *c, int64_t now)
{
	if (!c->wsi || c->drop || !c->since_ms)
		return -1;
	int64_t due = c->since_ms + (c->ws ? c->w->partial_ms * (1 + c->pinged) : c->w->handshake_ms);
	if (now < due)
		return (int)(due - now);
	if (c->ws && !c->pinged) {
		c->pinged = 1;
		c->ping_due = 1;
		lws_callback_on_writable(c->wsi);
		return (int)c->w->partial_ms;
	}
	gf_debug("control WebSocket: connection %d owed a %s for too long: closed", c->fd,
		 c->ws ? "whole message or a pong" : "request");
	kill_soon(c);
	return 0;
}

int gf_api_ws_service(struct gf_api_ws *w, const struct pollfd *fds, int n)
{
	if (gf_api_revents(fds, n, w->fd))
		accept_some(w);
	int64_t now = gf_now_ms();
	/* What our poll() found, handed to lws descriptor by descriptor (lws's own
	 * poll is never run: it would not see these descriptors' events). */
	for (unsigned i = 0; i < GF_API_MAX_CLIENTS; i++) {
		struct wclient *c = &w->c[i];
		short re = c->wsi ? gf_api_revents(fds, n, c->fd) : 0;
		if (!re)
			continue;
		if ((re & POLLIN) && c->ws && !c->since_ms)
			c->since_ms = now; /* input: it owes the rest of a message from now */
		struct lws_pollfd p = {.fd = c->fd, .events = POLLIN | POLLOUT, .revents = re};
		lws_service_fd(w->ctx, &p); /* may close it: its client is cleared (WSI_DESTROY) */
	}
	/* Then its timers (a close handshake that never ends) and the work it keeps
	 * pending (buffered input, close frames): a negative timeout skips its poll. */
	lws_service(w->ctx, -1);
	/* Deadlines: the loop must come back for the nearest (and to let lws close what they kill). */
	int t = -1;
	for (unsigned i = 0; i < GF_API_MAX_CLIENTS; i++) {
		int d = deadline(&w->c[i], now);
		t = d >= 0 && (t < 0 || d < t) ? d : t;
	}
	if (t == 0)
		t = GF_API_WS_PENDING_MS;
	/* Input lws holds back (one frame at a time) needs another pass soon, not at
	 * the loop's next wake-up; a few ms, so that a client lws cannot finish with
	 * never makes the loop spin. */
	if (lws_service_adjust_timeout(w->ctx, 1, 0) == 0 && (t < 0 || t > GF_API_WS_PENDING_MS))
		t = GF_API_WS_PENDING_MS;
	return t;
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
