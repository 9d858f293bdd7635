#define _GNU_SOURCE /* accept4 */
#include "status.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

struct gf_status_server {
	int fd;
	char *path;
	dev_t dev; /* the socket file this server bound: the path may be removed or replaced later */
	ino_t ino;
};

static int make_addr(const char *path, struct sockaddr_un *sa, struct gf_errbuf *eb)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (!path || !*path || strlen(path) >= sizeof(sa->sun_path)) {
		gf_errbuf_set(eb, "status socket path '%s': empty or longer than %zu bytes", path ? path : "",
			      sizeof(sa->sun_path) - 1);
		return GF_E_INVAL;
	}
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

/*
 * connect() with a deadline. A Unix stream socket whose listen backlog is
 * full (a stopped or stuck daemon) makes a blocking connect wait forever and
 * a non-blocking one fail with EAGAIN: retry that until the deadline.
 * @return a connected descriptor, or -1 with errno set (ETIMEDOUT at the deadline)
 */
static int connect_deadline(const struct sockaddr_un *sa, int timeout_ms)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int64_t deadline = gf_now_ms() + timeout_ms;
	for (;;) {
		if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
			return fd;
		int e = errno;
		if (e != EAGAIN && e != EINTR) {
			close(fd);
			errno = e;
			return -1;
		}
		if (gf_now_ms() >= deadline) {
			close(fd);
			errno = ETIMEDOUT;
			return -1;
		}
		struct timespec ts = {0, 10 * 1000000L};
		nanosleep(&ts, NULL);
	}
}

/*
 * Remove a socket file only when it is provably ours and dead: a socket
 * owned by this user on which a stream connect is refused (ECONNREFUSED:
 * nobody listens). Anything else (another user's socket, a datagram socket
 * such as /dev/log, which answers EPROTOTYPE; a daemon too busy to accept)
 * is left alone and refused.
 */
static int clear_stale(const char *path, const struct sockaddr_un *sa, struct gf_errbuf *eb)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		gf_errbuf_set(eb, "status socket %s: exists and is not a socket", path);
		return GF_E_INVAL;
	}
	if (st.st_uid != geteuid()) {
		gf_errbuf_set(eb,
			      "status socket %s: a socket of another user (uid %u) is there; not removing it",
			      path, (unsigned)st.st_uid);
		return GF_E_BUSY;
	}
	int fd = connect_deadline(sa, 200);
	if (fd >= 0) {
		close(fd);
		gf_errbuf_set(eb, "status socket %s: another gpufir daemon is answering there", path);
		return GF_E_BUSY;
	}
	if (errno == ETIMEDOUT) {
		gf_errbuf_set(eb,
			      "status socket %s: something listens there but does not accept "
			      "(a stuck daemon?); not removing it",
			      path);
		return GF_E_BUSY;
	}
	if (errno != ECONNREFUSED) {
		gf_errbuf_set(eb,
			      "status socket %s: a socket is there that is not a dead gpufir one (%s); "
			      "not removing it",
			      path, strerror(errno));
		return GF_E_BUSY;
	}
	unlink(path);
	return 0;
}

int gf_status_server_new(struct gf_status_server **out, const char *path, struct gf_errbuf *eb)
{
	struct sockaddr_un sa;
	*out = NULL;
	int err = make_addr(path, &sa, eb);
	if (err || (err = clear_stale(path, &sa, eb)))
		return err;
	struct gf_status_server *s = calloc(1, sizeof(*s));
	if (!s)
		return GF_E_NOMEM;
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	s->path = strdup(path);
	if (s->fd < 0 || !s->path) {
		err = s->path ? GF_E_SYSTEM : GF_E_NOMEM;
		gf_errbuf_set(eb, "status socket %s: %s", path, strerror(errno));
		goto fail;
	}
	if (bind(s->fd, (const struct sockaddr *)&sa, sizeof(sa)) != 0) {
		err = GF_E_SYSTEM;
		gf_errbuf_set(eb, "status socket %s: %s", path, strerror(errno));
		free(s->path); /* not bound by us: must not unlink it in _free */
		s->path = NULL;
		goto fail;
	}
	/* The service's user and group (audio) may query; others may not. chmod, not
	 * umask: umask is process-wide and other threads may be creating files. */
	struct stat st;
	if (chmod(path, 0660) != 0 || listen(s->fd, 8) != 0 || lstat(path, &st) != 0) {
		err = GF_E_SYSTEM;
		gf_errbuf_set(eb, "status socket %s: %s", path, strerror(errno));
		goto fail;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	*out = s;
	return 0;
fail:
	gf_status_server_free(s);
	return err;
}

void gf_status_server_free(struct gf_status_server *s)
{
	if (!s)
		return;
	/* Only our own socket file: whatever replaced it is someone else's. */
	if (s->path && gf_status_server_bound(s))
		unlink(s->path);
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	free(s);
}

int gf_status_server_bound(const struct gf_status_server *s)
{
	struct stat st;
	return s->ino && lstat(s->path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == s->dev &&
	       st.st_ino == s->ino;
}

int gf_status_server_renew(struct gf_status_server **s, struct gf_errbuf *eb)
{
	if (gf_status_server_bound(*s))
		return 0;
	struct gf_status_server *n = NULL;
	int err = gf_status_server_new(&n, (*s)->path, eb);
	if (err)
		return err; /* the path is taken (or unusable): keep the old one, try again later */
	gf_status_server_free(*s);
	*s = n;
	return 1;
}

int gf_status_server_fd(const struct gf_status_server *s)
{
	return s->fd;
}

const char *gf_status_server_path(const struct gf_status_server *s)
{
	return s->path;
}

int gf_status_server_serve(struct gf_status_server *s, const char *text)
{
	int served = 0;
	size_t len = strlen(text);
	for (;;) {
		int c = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c < 0)
			break; /* EAGAIN: no more pending; other errors: try next time */
		/* The block fits a socket buffer; a client that cannot take it is dropped. */
		(void)!send(c, text, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		shutdown(c, SHUT_RDWR);
		close(c);
		served++;
	}
	return served;
}

static int read_all(int fd, char *buf, size_t len, int timeout_ms, const char *path, struct gf_errbuf *eb)
{
	size_t used = 0;
	int64_t deadline = gf_now_ms() + timeout_ms;
	for (;;) {
		int64_t left = deadline - gf_now_ms();
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			gf_errbuf_set(eb, "status socket %s: no answer within %d ms", path, timeout_ms);
			return GF_E_IO;
		}
		char tmp[1024];
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			gf_errbuf_set(eb, "status socket %s: %s", path, strerror(errno));
			return GF_E_IO;
		}
		if (n == 0)
			break;
		size_t take = (size_t)n < len - 1 - used ? (size_t)n : len - 1 - used;
		memcpy(buf + used, tmp, take);
		used += take;
	}
	buf[used] = '\0';
	return 0;
}

int gf_status_query(const char *path, char *buf, size_t len, int timeout_ms, struct gf_errbuf *eb)
{
	struct sockaddr_un sa;
	if (!buf || len == 0)
		return GF_E_INVAL;
	buf[0] = '\0';
	int err = make_addr(path, &sa, eb);
	if (err)
		return err;
	int64_t t0 = gf_now_ms();
	int fd = connect_deadline(&sa, timeout_ms);
	if (fd < 0) {
		gf_errbuf_set(eb, "status socket %s: %s (is the gpufir daemon running?)", path,
			      errno == ETIMEDOUT ? "no connection within the timeout" : strerror(errno));
		return GF_E_IO;
	}
	int64_t left = timeout_ms - (gf_now_ms() - t0); /* one deadline for connect and answer */
	err = read_all(fd, buf, len, left > 1 ? (int)left : 1, path, eb);
	close(fd);
	return err;
}
