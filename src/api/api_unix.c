/* The Unix socket transport: one JSON message per line each way. Every
 * socket is non-blocking; a client's input is bounded by GF_API_MAX_MSG (a
 * longer line is answered with an error and the client dropped), its unread
 * replies by GF_API_OUT_MAX (past that it is dropped: the daemon never waits
 * for a reader), and the clients by GF_API_MAX_CLIENTS (one more is told so
 * and closed). A line must be whole within UNIX_PARTIAL_MS of its first
 * byte, or the client is told so and closed: a client that sends part of a
 * line and stalls does not keep its slot. An idle client (no partial line)
 * may stay while there is room; when the table is full, a newcomer takes the
 * slot of the client idle longest past GF_API_UNIX_IDLE_MS (no request, no
 * reply pending or unsent, no subscription), which is told so and closed:
 * 16 idle holders keep a client out for at most that long. The socket file
 * is made with the process's umask: the service's UMask=0077 leaves it to
 * the daemon's user (docs/api.md). */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "api_transport.h"
#include "clock.h"

/* The WebSocket's challenge and its answer's time together: there is no ping on a Unix socket. */
#define UNIX_PARTIAL_MS (2 * GF_API_PARTIAL_MS)

struct uclient {
	int fd; /* -1: free */
	char *in;
	size_t in_len;
	char *out;
	size_t out_len, out_off;
	int closing;	  /* flush what is queued, then close */
	int64_t since_ms; /* when the unfinished line in `in` began (0: none) */
	int64_t last_ms;  /* when it connected or last sent a request */
	struct gf_api_unix *u;
};

struct gf_api_unix {
	struct gf_api *a;
	int fd;
	char *path;
	dev_t dev;
	ino_t ino;
	struct uclient c[GF_API_MAX_CLIENTS];
};

/* A socket file left by a dead process (connect refused) is removed; a live one is not. */
static int clear_stale(const char *path, const struct sockaddr_un *sa, struct gf_errbuf *eb)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		gf_errbuf_set(eb, "control socket %s: exists and is not a socket", path);
		return GF_E_INVAL;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return GF_E_SYSTEM;
	int r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	int e = errno;
	close(fd);
	if (r == 0 || e != ECONNREFUSED || st.st_uid != geteuid()) {
		gf_errbuf_set(eb, "control socket %s: in use (another daemon?); not removing it", path);
		return GF_E_BUSY;
	}
	unlink(path);
	return 0;
}

int gf_api_unix_new(struct gf_api_unix **out, struct gf_api *a, const char *path, struct gf_errbuf *eb)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	*out = NULL;
	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path)) {
		gf_errbuf_set(eb, "control socket path '%s': empty or longer than %zu bytes",
			      path ? path : "", sizeof(sa.sun_path) - 1);
		return GF_E_INVAL;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int err = clear_stale(path, &sa, eb);
	if (err)
		return err;
	struct gf_api_unix *u = calloc(1, sizeof(*u));
	if (!u || !(u->path = strdup(path))) {
		free(u);
		return GF_E_NOMEM;
	}
	u->a = a;
	for (unsigned i = 0; i < GF_API_MAX_CLIENTS; i++)
		u->c[i].fd = -1;
	struct stat st;
	u->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->fd < 0 || bind(u->fd, (const struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(u->fd, 16) != 0 || lstat(path, &st) != 0) {
		gf_errbuf_set(eb, "control socket %s: %s", path, strerror(errno));
		if (u->fd >= 0)
			close(u->fd);
		free(u->path);
		free(u);
		return GF_E_SYSTEM;
	}
	u->dev = st.st_dev;
	u->ino = st.st_ino;
	*out = u;
	return 0;
}

static void client_close(struct uclient *c)
{
	gf_api_client_gone(c->u->a, c);
	close(c->fd);
	free(c->in);
	free(c->out);
	*c = (struct uclient){.fd = -1};
}

void gf_api_unix_free(struct gf_api_unix *u)
{
	if (!u)
		return;
	for (unsigned i = 0; i < GF_API_MAX_CLIENTS; i++)
		if (u->c[i].fd >= 0)
			client_close(&u->c[i]);
	close(u->fd);
	struct stat st;
	if (lstat(u->path, &st) == 0 && st.st_dev == u->dev && st.st_ino == u->ino)
		unlink(u->path);
	free(u->path);
	free(u);
}

/* gf_api_send_fn: queue @p text and a newline; a client that lets too much pile up is dropped. */
static void uclient_send(void *client, const char *text, size_t len)
{
	struct uclient *c = client;
	if (c->fd < 0 || c->closing == 2)
		return;
	if (c->out_off && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_len - c->out_off + len + 1 > GF_API_OUT_MAX) {
		c->closing = 2; /* not reading: drop it, replies and all */
		return;
	}
	if (c->out_off) { /* compact */
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	char *b = realloc(c->out, c->out_len + len + 1);
	if (!b) {
		c->closing = 2;
		return;
	}
	c->out = b;
	memcpy(c->out + c->out_len, text, len);
	c->out[c->out_len + len] = '\n';
	c->out_len += len + 1;
}

static void flush(struct uclient *c)
{
	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w <= 0) {
			if (w < 0 && errno != EAGAIN && errno != EINTR)
				c->closing = 2;
			return;
		}
		c->out_off += (size_t)w;
	}
}

/* Say @p msg (one line) to a client about to be closed: best effort, never waiting. */
static void tell(int fd, const char *msg)
{
	ssize_t w = send(fd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)w;
}

/* The daemon's own user and root are the owner: they could edit the config file as well. Any
 * other user the socket's mode lets in (a group's web UI) is a guest (docs/api.md). */
static enum gf_api_standing peer_standing(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0)
		return GF_API_GUEST;
	return cr.uid == geteuid() || cr.uid == 0 ? GF_API_OWNER : GF_API_GUEST;
}

/* Idle: nothing asked for GF_API_UNIX_IDLE_MS, nothing owed either way, no subscription. */
static int idle(const struct uclient *c, int64_t now)
{
	return c->fd >= 0 && !c->closing && !c->in_len && c->out_off == c->out_len &&
	       now - c->last_ms >= GF_API_UNIX_IDLE_MS && !gf_api_client_busy(c->u->a, c);
}

/* A slot for a newcomer: a free one, else the longest-idle client's, which is told and closed.
 * @return NULL: every client is active */
static struct uclient *free_slot(struct gf_api_unix *u, int64_t now)
{
	struct uclient *old = NULL;
	for (unsigned i = 0; i < GF_API_MAX_CLIENTS; i++) {
		struct uclient *c = &u->c[i];
		if (c->fd < 0)
			return c;
		if (idle(c, now) && (!old || c->last_ms < old->last_ms))
			old = c;
	}
	if (old) {
		char msg[120];
		snprintf(msg, sizeof(msg),
			 "{\"Invalid\":{\"error\":\"closed: idle over %d s while every control connection "
			 "was taken\"}}\n",
			 GF_API_UNIX_IDLE_MS / 1000);
		tell(old->fd, msg);
		client_close(old);
	}
	return old;
}

static void accept_some(struct gf_api_unix *u, int64_t now)
{
	for (int k = 0; k < GF_API_ACCEPTS_PER_PASS; k++) {
		int fd = accept4(u->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct uclient *c = free_slot(u, now);
		if (!c) {
			tell(fd, "{\"Invalid\":{\"error\":\"too many control connections\"}}\n");
			close(fd);
			continue;
		}
		*c = (struct uclient){.fd = fd, .u = u, .last_ms = now};
		gf_api_client_standing(u->a, c, peer_standing(fd));
	}
}

/* Handle the complete lines in c->in, at most GF_API_MSGS_PER_PASS. @return 1 if more are waiting */
static int handle_lines(struct uclient *c)
{
	int handled = 0;
	size_t start = 0;
	while (c->closing != 2) {
		char *nl = memchr(c->in + start, '\n', c->in_len - start);
		if (!nl)
			break;
		if (handled == GF_API_MSGS_PER_PASS)
			break;
		size_t n = (size_t)(nl - (c->in + start));
		if (n && c->in[start + n - 1] == '\r')
			n--;
		if (n) {
			c->last_ms = gf_now_ms();
			gf_api_handle(c->u->a, c, uclient_send, c->in + start, n);
		}
		handled++;
		start = (size_t)(nl - c->in) + 1;
	}
	memmove(c->in, c->in + start, c->in_len - start);
	c->in_len -= start;
	return c->in_len && memchr(c->in, '\n', c->in_len) != NULL;
}

/* Read what is there (bounded), then handle it. @return 1 if input is left for the next pass */
static int client_read(struct uclient *c)
{
	size_t got = 0;
	if (!c->in && !(c->in = malloc(GF_API_MAX_MSG + 1))) {
		c->closing = 2;
		return 0;
	}
	while (!c->closing && got < GF_API_READ_PER_PASS && c->in_len < GF_API_MAX_MSG + 1) {
		ssize_t r = recv(c->fd, c->in + c->in_len, GF_API_MAX_MSG + 1 - c->in_len, MSG_DONTWAIT);
		if (r == 0)
			c->closing = 1; /* the client closed its side: answer what it sent, then close */
		if (r <= 0) {
			if (r < 0 && errno != EAGAIN && errno != EINTR)
				c->closing = 2;
			break;
		}
		c->in_len += (size_t)r;
		got += (size_t)r;
		if (memchr(c->in + c->in_len - r, '\n', (size_t)r))
			break;
	}
	int more = handle_lines(c);
	if (!more && c->in_len > GF_API_MAX_MSG) {
		char msg[120];
		snprintf(msg, sizeof(msg), "{\"Invalid\":{\"error\":\"message over the limit of %u bytes\"}}",
			 GF_API_MAX_MSG);
		uclient_send(c, msg, strlen(msg));
		c->in_len = 0;
		c->closing = 1;
	}
	return more || (got >= GF_API_READ_PER_PASS && !c->closing);
}

int gf_api_unix_pollfds(struct gf_api_unix *u, struct pollfd *fds, int max)
{
	int n = 0;
	if (n < max)
		fds[n++] = (struct pollfd){.fd = u->fd, .events = POLLIN};
	for (unsigned i = 0; i < GF_API_MAX_CLIENTS && n < max; i++) {
		struct uclient *c = &u->c[i];
		if (c->fd >= 0)
			fds[n++] = (struct pollfd){
				.fd = c->fd,
				.events = (short)(POLLIN | (c->out_off < c->out_len ? POLLOUT : 0))};
	}
	return n;
}

/* An unfinished line's clock: started by its first byte, told and closed once it runs out.
 * @return ms until it runs out, or -1: no unfinished line */
static int partial_line(struct uclient *c, int64_t now)
{
	if (c->closing || !c->in_len || memchr(c->in, '\n', c->in_len)) {
		c->since_ms = 0;
		return -1;
	}
	if (!c->since_ms)
		c->since_ms = now;
	if (now - c->since_ms < UNIX_PARTIAL_MS)
		return (int)(c->since_ms + UNIX_PARTIAL_MS - now);
	char msg[120];
	snprintf(msg, sizeof(msg), "{\"Invalid\":{\"error\":\"message incomplete: no newline within %d s\"}}",
		 UNIX_PARTIAL_MS / 1000);
	uclient_send(c, msg, strlen(msg));
	c->in_len = 0;
	c->closing = 1;
	return 0;
}

int gf_api_unix_service(struct gf_api_unix *u, const struct pollfd *fds, int n)
{
	int more = 0, t = -1;
	int64_t now = gf_now_ms();
	if (gf_api_revents(fds, n, u->fd))
		accept_some(u, now);
	for (unsigned i = 0; i < GF_API_MAX_CLIENTS; i++) {
		struct uclient *c = &u->c[i];
		if (c->fd < 0)
			continue;
		short re = gf_api_revents(fds, n, c->fd);
		if ((re & (POLLIN | POLLHUP | POLLERR)) || c->in_len)
			more |= client_read(c);
		int d = partial_line(c, now);
		t = d >= 0 && (t < 0 || d < t) ? d : t;
		flush(c);
		if (c->closing == 2 || (c->closing == 1 && c->out_off == c->out_len))
			client_close(c);
	}
	return more ? 0 : t;
}

unsigned gf_api_unix_clients(const struct gf_api_unix *u)
{
	unsigned n = 0;
	for (unsigned i = 0; u && i < GF_API_MAX_CLIENTS; i++)
		n += u->c[i].fd >= 0;
	return n;
}

int gf_api_unix_bound(const struct gf_api_unix *u)
{
	struct stat st;
	return lstat(u->path, &st) == 0 && st.st_dev == u->dev && st.st_ino == u->ino;
}

unsigned gf_api_unix_unsent(const struct gf_api_unix *u)
{
	unsigned n = 0;
	for (unsigned i = 0; u && i < GF_API_MAX_CLIENTS; i++)
		n += u->c[i].fd >= 0 && u->c[i].closing != 2 && u->c[i].out_off < u->c[i].out_len;
	return n;
}
