/* The Unix socket transport in-process (test_api.c's fake daemon behind it):
 * one reply line per command line, a line over GF_API_MAX_MSG answered and
 * dropped, the client cap, a client that sends but never reads dropped once
 * its replies pile up, and the server's work per pass bounded. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api.h"
#include "clock.h"
#include "testutil.h"

void test_unix_transport(struct gf_api *a);

/* One loop pass as the daemon runs it. @return the server's wish for the next timeout */
static int pass(struct gf_api_server *s, int timeout_ms)
{
	struct pollfd p[GF_API_POLLFDS];
	int n = gf_api_server_pollfds(s, p, GF_API_POLLFDS);
	CHECK(poll(p, (nfds_t)n, timeout_ms) >= 0);
	return gf_api_server_service(s, p, n);
}

static int dial(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/* Read one line from @p fd, running server passes meanwhile; "" on EOF. */
static char *line(struct gf_api_server *s, int fd)
{
	static char buf[1 << 16];
	size_t len = 0;
	int64_t end = gf_now_ms() + 5000;
	while (gf_now_ms() < end) {
		pass(s, 10);
		ssize_t r = recv(fd, buf + len, 1, 0);
		if (r == 0)
			break;
		if (r < 0) {
			CHECK(errno == EAGAIN);
			continue;
		}
		if (buf[len] == '\n')
			break;
		CHECK(++len < sizeof(buf) - 1);
	}
	buf[len] = '\0';
	return buf;
}

static int closed(struct gf_api_server *s, int fd)
{
	char c;
	for (int i = 0; i < 200; i++) {
		pass(s, 10);
		ssize_t r = recv(fd, &c, 1, 0);
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return 1;
	}
	return 0;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EAGAIN)
			return; /* the server is not reading more this pass: caller passes */
		CHECK(w > 0);
		p += w;
		n -= (size_t)w;
	}
}

/* A newcomer at a full table: refused while every client is fresh, then let in by closing the
 * longest-idle one (@p fd) once it has been idle GF_API_UNIX_IDLE_MS, not before and well within
 * 15 s; a subscriber, idle longer still, keeps its slot. */
static void idle_make_room(struct gf_api_server *s, const char *path, int fd)
{
	int sub = dial(path);
	send_all(sub, "{\"SubscribeSignalLevels\": 5000}\n", 32);
	CHECK(strstr(line(s, sub), "{\"SubscribeSignalLevels\":{\"result\":\"Ok\""));
	send_all(fd, "\"GetVersion\"\n", 13); /* the first client still answers, and is idle from now */
	CHECK(strstr(line(s, fd), GPUFIR_VERSION));
	int64_t t0 = gf_now_ms(), in = 0;
	int fds[GF_API_MAX_CLIENTS];
	for (unsigned i = 2; i < GF_API_MAX_CLIENTS; i++) {
		fds[i] = dial(path);
		pass(s, 0);
	}
	pass(s, 10);
	CHECK(gf_api_server_clients(s) == GF_API_MAX_CLIENTS);
	int knock = -1;
	while (!in && gf_now_ms() - t0 < 15000) {
		knock = dial(path);
		char buf[128];
		ssize_t r = -1;
		for (int i = 0; i < 20 && r < 0; i++) { /* refused: told and closed at once */
			pass(s, 10);
			r = recv(knock, buf, sizeof(buf) - 1, 0);
		}
		if (r < 0) {
			in = gf_now_ms() - t0; /* kept: nothing said to it */
			break;
		}
		buf[r > 0 ? r : 0] = '\0';
		CHECK(strstr(buf, "too many control connections"));
		close(knock);
		pass(s, 500);
	}
	printf("  full table of idle clients: a newcomer got in after %.1f s\n", in / 1000.0);
	CHECK(in >= GF_API_UNIX_IDLE_MS - 1000 && in < 15000);
	CHECK(strstr(line(s, fd), "closed: idle over 10 s"));
	CHECK(closed(s, fd));
	close(fd);
	send_all(knock, "\"GetVersion\"\n", 13);
	CHECK(strstr(line(s, knock), GPUFIR_VERSION));
	send_all(sub, "\"GetState\"\n", 11); /* the subscriber kept its slot (level pushes came too) */
	const char *l = line(s, sub);
	for (int i = 0; i < 10 && strstr(l, "SignalLevelsEvent"); i++)
		l = line(s, sub);
	CHECK(strstr(l, "{\"GetState\":{\"result\":\"Ok\",\"value\":\"Running\"}}"));
	close(sub);
	close(knock);
	for (unsigned i = 2; i < GF_API_MAX_CLIENTS; i++)
		close(fds[i]);
}

void test_unix_transport(struct gf_api *a)
{
	char *dir = gf_test_tmpdir("api_unix");
	char *path = gf_test_path(dir, "control");
	struct gf_api_server *s;
	struct gf_errbuf eb = {{0}};
	struct gf_api_server_params p = {.unix_path = path};
	CHECK_OK_EB(gf_api_server_new(&s, a, &p, &eb), &eb);
	/* A second server on the same live path is refused. */
	struct gf_api_server *s2;
	CHECK(gf_api_server_new(&s2, a, &p, &eb) == GF_E_BUSY);

	/* Two commands in one write, CRLF and blank lines: two replies, in order. */
	int fd = dial(path);
	send_all(fd, "\"GetVersion\"\r\n\n\"GetState\"\n", 27);
	CHECK(strcmp(line(s, fd), "{\"GetVersion\":{\"result\":\"Ok\",\"value\":\"" GPUFIR_VERSION "\"}}") ==
	      0);
	CHECK(strcmp(line(s, fd), "{\"GetState\":{\"result\":\"Ok\",\"value\":\"Running\"}}") == 0);
	send_all(fd, "garbage\n", 8);
	CHECK(strstr(line(s, fd), "{\"Invalid\":{\"error\":\"invalid JSON"));

	/* A line over the limit: an error reply, then the connection closes; the buffer never grew past it.
	 */
	int big = dial(path);
	size_t n = GF_API_MAX_MSG + 4096;
	char *junk = malloc(n);
	memset(junk, 'x', n);
	size_t off = 0;
	for (int i = 0; i < 2000 && off < n; i++) {
		ssize_t w = send(big, junk + off, n - off, MSG_NOSIGNAL);
		if (w > 0)
			off += (size_t)w;
		pass(s, 1);
	}
	CHECK(strstr(line(s, big), "message over the limit"));
	CHECK(closed(s, big));
	close(big);
	free(junk);

	/* The cap: GF_API_MAX_CLIENTS at once (fd is one); one more is told so and closed. */
	int fds[GF_API_MAX_CLIENTS];
	for (unsigned i = 1; i < GF_API_MAX_CLIENTS; i++) {
		fds[i] = dial(path);
		pass(s, 0);
	}
	pass(s, 10);
	CHECK(gf_api_server_clients(s) == GF_API_MAX_CLIENTS);
	int extra = dial(path);
	CHECK(strstr(line(s, extra), "too many control connections"));
	CHECK(closed(s, extra));
	close(extra);
	/* ... and the others still answer. */
	send_all(fds[GF_API_MAX_CLIENTS - 1], "\"GetState\"\n", 11);
	CHECK(strstr(line(s, fds[GF_API_MAX_CLIENTS - 1]), "Running"));
	for (unsigned i = 1; i < GF_API_MAX_CLIENTS; i++)
		close(fds[i]);
	pass(s, 10);
	pass(s, 10);
	CHECK(gf_api_server_clients(s) == 1);

	/* A client that sends and never reads: each pass stays short, and it is
	 * dropped once its unread replies pass the bound. GetConfig replies are
	 * small here, so send many. */
	int mute = dial(path);
	int sz = 4096;
	setsockopt(mute, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	static char req[64 * 1024];
	for (size_t k = 0; k + 14 <= sizeof(req); k += 14)
		memcpy(req + k, "\"GetStatus\"  \n", 14);
	int dropped = 0;
	for (int i = 0; i < 4000 && !dropped; i++) {
		send_all(mute, req, sizeof(req) - sizeof(req) % 14);
		int64_t t0 = gf_now_ms();
		pass(s, 0);
		CHECK(gf_now_ms() - t0 < 500); /* never blocked on the client */
		dropped = gf_api_server_clients(s) == 1;
	}
	CHECK(dropped);
	close(mute);

	/* Part of a line, then nothing: the loop, sleeping as long as the server asks, wakes for its
	 * deadline; the client is told and closed 10 s after its first byte, not before (it once held
	 * its slot for good). The first client, idle all along, stays. */
	int half = dial(path);
	send_all(half, "\"GetSta", 7);
	int64_t t0 = gf_now_ms(), told = 0;
	for (int i = 0; i < 3; i++) /* accepted, then read */
		pass(s, 10);
	char reply[256];
	size_t got = 0;
	while (!told && gf_now_ms() - t0 < 15000) {
		int wish = pass(s, 0);
		CHECK(wish >= 0 && wish <= 10000); /* a deadline is pending: the loop must come back */
		struct pollfd pf = {.fd = half, .events = POLLIN};
		if (poll(&pf, 1, wish) == 1) {
			ssize_t r = recv(half, reply + got, sizeof(reply) - 1 - got, 0);
			got += r > 0 ? (size_t)r : 0;
			reply[got] = '\0';
			told = strchr(reply, '\n') ? gf_now_ms() - t0 : 0;
		}
	}
	printf("  part of a line: told after %.1f s: %s", told / 1000.0, reply);
	CHECK(told >= 10000 && told < 12000 && strstr(reply, "message incomplete: no newline within 10 s"));
	CHECK(closed(s, half));
	close(half);
	CHECK(gf_api_server_clients(s) == 1);
	idle_make_room(s, path, fd);

	gf_api_server_free(s);
	CHECK(!gf_test_exists(path)); /* removed with the server */
	gf_test_rmtree(dir);
	free(path);
	free(dir);
}
