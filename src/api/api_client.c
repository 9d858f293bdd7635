/* The Unix socket's client side: one command, one reply line, one deadline.
 * `gpufir --status --json` uses it (GetStatus), so the program links jansson
 * but no libwebsockets (--as-needed: nothing here calls it). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api_internal.h"
#include "clock.h"

static int wait_fd(int fd, short ev, int64_t deadline)
{
	int64_t left = deadline - gf_now_ms();
	struct pollfd p = {.fd = fd, .events = ev};
	return left > 0 && poll(&p, 1, (int)left) == 1 ? 0 : -1;
}

static int connect_to(const char *path, int64_t deadline, struct gf_errbuf *eb)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		gf_errbuf_set(eb, "control socket path too long");
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	while (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		if ((errno != EAGAIN && errno != EINTR) || gf_now_ms() >= deadline) {
			gf_errbuf_set(eb, "no gpufir daemon answers on %s: %s", path,
				      errno == EAGAIN ? "timed out" : strerror(errno));
			close(fd);
			return -1;
		}
		usleep(10000);
	}
	return fd;
}

static int send_all(int fd, const char *buf, size_t len, int64_t deadline)
{
	while (len) {
		ssize_t w = send(fd, buf, len, MSG_NOSIGNAL);
		if (w < 0 && (errno == EAGAIN || errno == EINTR) && wait_fd(fd, POLLOUT, deadline) == 0)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

int gf_api_call(const char *path, const char *command, char **reply, int timeout_ms, struct gf_errbuf *eb)
{
	int64_t deadline = gf_now_ms() + timeout_ms;
	*reply = NULL;
	int fd = connect_to(path, deadline, eb);
	if (fd < 0)
		return GF_E_IO;
	size_t cap = GF_API_MAX_REPLY + 2, len = 0;
	char *buf = malloc(cap);
	if (!buf) {
		close(fd);
		return GF_E_NOMEM;
	}
	int err = GF_E_IO;
	/* The line in one piece: a server that answers on its first read and closes must not
	 * see a newline arrive after it (the client would then get EPIPE, not the reply). */
	size_t clen = strlen(command);
	char *line = malloc(clen + 1);
	if (!line) {
		err = GF_E_NOMEM;
		goto out;
	}
	memcpy(line, command, clen);
	line[clen] = '\n';
	int sent = send_all(fd, line, clen + 1, deadline);
	free(line);
	if (sent) {
		gf_errbuf_set(eb, "%s: cannot send: %s", path, strerror(errno));
		goto out;
	}
	while (len < cap - 1) {
		ssize_t r = recv(fd, buf + len, cap - 1 - len, 0);
		if (r < 0 && (errno == EAGAIN || errno == EINTR) && wait_fd(fd, POLLIN, deadline) == 0)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
		if (memchr(buf + len - r, '\n', (size_t)r))
			break;
	}
	buf[len] = '\0';
	char *nl = strchr(buf, '\n');
	if (!nl) {
		gf_errbuf_set(eb, "%s: no reply within %d ms", path, timeout_ms);
		goto out;
	}
	*nl = '\0';
	*reply = buf;
	buf = NULL;
	err = 0;
out:
	free(buf);
	close(fd);
	return err;
}

int gf_api_print_status(const char *path)
{
	struct gf_errbuf eb = {{0}};
	char *reply;
	if (gf_api_call(path ? path : GF_API_DEFAULT_SOCKET, "\"GetStatus\"", &reply, 2000, &eb)) {
		fprintf(stderr, "gpufir: %s\n", eb.msg);
		return GF_EXIT_IO;
	}
	json_t *root = json_loads(reply, 0, NULL);
	json_t *body = json_object_get(root, "GetStatus");
	json_t *v = json_object_get(body, "value");
	const char *res = json_string_value(json_object_get(body, "result"));
	char *text = v && res && strcmp(res, "Ok") == 0
			     ? json_dumps(v, JSON_INDENT(2) | JSON_REAL_PRECISION(10))
			     : NULL;
	int rc = GF_EXIT_OK;
	if (text)
		printf("%s\n", text);
	else {
		fprintf(stderr, "gpufir: unexpected reply from %s: %.300s\n", path, reply);
		rc = GF_EXIT_IO;
	}
	free(text);
	json_decref(root);
	free(reply);
	return fflush(stdout) == 0 ? rc : GF_EXIT_IO;
}
