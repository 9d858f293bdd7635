/*
 * The control API of a running daemon (JACK's dummy driver) against hostile
 * clients, on the Unix socket and the WebSocket. Each case prints its result;
 * through all of them the daemon must keep answering its status socket
 * quickly, reload on SIGHUP, and stop on SIGTERM.
 *
 *   1  garbage bytes and invalid JSON: an Invalid reply each, the connection
 *      still serves the next command
 *   2  a line over the limit (megabytes, no newline): an error reply and the
 *      connection closed long before all of it is sent (the buffer does not grow)
 *   3  a WebSocket frame over the limit: closed with 1009; a binary frame: closed
 *   4  many connections: the cap's worth served, the rest told so and closed
 *      (Unix) or closed (WebSocket: 8 from each address, 16 in all), and the
 *      served ones still answer
 *   5  clients that send commands and never read: dropped once their replies
 *      pile up; the daemon never waits for them
 *   6  browsers' attacks, as raw requests: a WebSocket upgrade (with a SetVolume
 *      sent behind it at once) from a page of another origin, or with another
 *      Host (DNS rebinding), is refused (403, 421) and the volume stays; plain
 *      GETs with another Host get 421; the own page's origin, the configured
 *      control_allowed_origins and clients without an Origin are served
 *   7  a half-open flood: 24 connections from three addresses (16 upgraded
 *      that send one byte of a frame fill the table, 8 half upgrade requests
 *      find no room); a legitimate client gets in within two deadlines (the
 *      ping's, then its pong's) and a retry, and every one of them is closed;
 *      a silent connection and half a request are closed after one deadline
 *
 * The daemon runs with its WebSocket deadlines (GF_API_HANDSHAKE_MS and
 * GF_API_PARTIAL_MS, 5 s each) at DEADLINE_MS through their test hook: case 7
 * waits them out four times, and that is time, not work.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api.h"
#include "clock.h"
#include "daemonutil.h"
#include "status.h"
#include "testutil.h"
#include "wsclient.h"

#define RATE 48000
#define CH 2
#define DEADLINE_MS 1000 /* GPUFIR_TEST_API_TIMEOUT_MS */
#define DEADLINE_S (DEADLINE_MS / 1000.0)

static struct gf_daemon dm;
static char ctl_path[700];
static int port;

static int dial(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	CHECK(strlen(ctl_path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, ctl_path, strlen(ctl_path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		gf_daemon_die(&dm, "cannot connect to the control socket");
	return fd;
}

/* One reply line from @p fd (without its newline), "" on EOF, NULL on timeout. */
static const char *read_line(int fd, int timeout_ms)
{
	static char buf[1 << 16];
	size_t len = 0;
	double end = gf_now_s() + timeout_ms / 1000.0;
	while (len < sizeof(buf) - 1) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int left = (int)((end - gf_now_s()) * 1000.0);
		if (left <= 0 || poll(&p, 1, left) != 1)
			return NULL;
		ssize_t r = recv(fd, buf + len, 1, 0);
		if (r <= 0)
			break;
		if (buf[len] == '\n')
			break;
		len++;
	}
	buf[len] = '\0';
	return buf;
}

static void expect_line(int fd, const char *send_text, size_t n, const char *want, const char *what)
{
	CHECK(send(fd, send_text, n, MSG_NOSIGNAL) == (ssize_t)n);
	const char *got = read_line(fd, 10000);
	if (!got || !strstr(got, want)) {
		printf("%s: got %.300s, wanted %s\n", what, got ? got : "(nothing)", want);
		gf_daemon_die(&dm, what);
	}
}

static double slowest_ms; /* the slowest status answer of the quiet checks */

/* The daemon still answers its status socket, within @p ms (said unless @p ms is negative: quiet). */
static void status_prompt(const char *when, int ms)
{
	int quiet = ms < 0;
	ms = quiet ? -ms : ms;
	char st[GF_STATUS_MAX];
	struct gf_errbuf eb = {{0}};
	double t0 = gf_now_s();
	if (gf_status_query(dm.status_path, st, sizeof(st), ms, &eb) != 0) {
		printf("status during %s: %s\n", when, eb.msg);
		gf_daemon_die(&dm, "the status socket stopped answering");
	}
	double took = (gf_now_s() - t0) * 1000.0;
	if (took > slowest_ms)
		slowest_ms = took;
	if (!quiet)
		printf("  status answered in %.0f ms (%s)\n", took, when);
}

static void case1(void)
{
	int fd = dial();
	static const char garbage[] = "\x01\x02\xff\xfe\x00\x7f garbage\n";
	expect_line(fd, garbage, sizeof(garbage) - 1, "{\"Invalid\":{\"error\":\"invalid JSON",
		    "garbage bytes");
	expect_line(fd, "{\"GetState\":\n", 13, "{\"Invalid\":{\"error\":\"invalid JSON", "invalid JSON");
	expect_line(fd, "[1,2,3]\n", 8, "a command is a JSON string", "a JSON array");
	expect_line(fd, "\"Shutdown\"\n", 11, "unknown command \\\"Shutdown\\\"", "unknown command");
	expect_line(fd, "\"GetState\"\n", 11, "{\"GetState\":{\"result\":\"Ok\"", "a command after garbage");
	close(fd);
	printf("case 1: garbage, invalid JSON, unknown command: Invalid replies, connection still served\n");
}

static void case2(void)
{
	int fd = dial();
	size_t chunk = 64 * 1024, total = 0, limit = 16u << 20;
	char *junk = malloc(chunk);
	memset(junk, 'x', chunk);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	double end = gf_now_s() + 20.0;
	int closed = 0;
	while (total < limit && gf_now_s() < end) {
		ssize_t w = send(fd, junk, chunk, MSG_NOSIGNAL);
		if (w > 0) {
			total += (size_t)w;
			continue;
		}
		if (errno == EPIPE || errno == ECONNRESET) {
			closed = 1;
			break;
		}
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		poll(&p, 1, 50);
	}
	free(junk);
	fcntl(fd, F_SETFL, 0);
	if (!closed) {
		const char *l = read_line(fd, 5000);
		printf("case 2: sent %zu bytes, not closed; read: %.200s\n", total, l ? l : "(nothing)");
		gf_daemon_die(&dm, "a line over the limit did not end the connection");
	}
	printf("case 2: a line without end: connection closed after %zu bytes sent (limit %u)\n", total,
	       GF_API_MAX_MSG);
	CHECK(total < 4 * (size_t)GF_API_MAX_MSG); /* the socket buffers' worth over the limit, no more */
	close(fd);
	/* The reply before the close: the reason. */
	fd = dial();
	junk = malloc(GF_API_MAX_MSG + 2);
	memset(junk, 'y', GF_API_MAX_MSG + 1);
	size_t off = 0;
	while (off < GF_API_MAX_MSG + 1) {
		ssize_t w = send(fd, junk + off, GF_API_MAX_MSG + 1 - off, MSG_NOSIGNAL);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	const char *l = read_line(fd, 10000);
	if (!l || !strstr(l, "message over the limit"))
		gf_daemon_die(&dm, "no error reply for a line over the limit");
	const char *eof = read_line(fd, 10000);
	CHECK(eof && !*eof); /* then closed */
	free(junk);
	close(fd);
	status_prompt("case 2", 1000);
}

static void case3(void)
{
	int ws = gf_ws_connect("127.0.0.1", port, 5000);
	if (ws < 0)
		gf_daemon_die(&dm, "no WebSocket");
	char buf[4096];
	CHECK(gf_ws_call(ws, "\"GetState\"", buf, sizeof(buf), 5000) > 0 && strstr(buf, "Running"));
	CHECK(gf_ws_call(ws, "not json", buf, sizeof(buf), 5000) > 0 && strstr(buf, "\"Invalid\""));
	size_t n = GF_API_MAX_MSG + 1000;
	char *big = malloc(n);
	memset(big, ' ', n);
	big[0] = '"';
	int code = 0;
	gf_ws_send_frame(ws, 1, 1, big, n); /* may fail part-way: the server closes */
	long r = gf_ws_recv(ws, buf, sizeof(buf), 5000, &code);
	free(big);
	if (r != -2 || code != 1009) {
		printf("case 3: frame over the limit: recv %ld, close code %d\n", r, code);
		gf_daemon_die(&dm, "a WebSocket message over the limit was not closed with 1009");
	}
	close(ws);
	status_prompt("case 3, a message over the limit", 1000);
	/* The same over fragments: the sum counts. */
	ws = gf_ws_connect("127.0.0.1", port, 5000);
	CHECK(ws >= 0);
	big = malloc(GF_API_MAX_MSG / 4);
	memset(big, ' ', GF_API_MAX_MSG / 4);
	int sent = 0;
	for (int i = 0; i < 8 && gf_ws_send_frame(ws, i ? 0 : 1, 0, big, GF_API_MAX_MSG / 4) == 0; i++)
		sent++;
	free(big);
	r = gf_ws_recv(ws, buf, sizeof(buf), 5000, &code);
	CHECK(r == -2 && code == 1009);
	close(ws);
	ws = gf_ws_connect("127.0.0.1", port, 5000);
	CHECK(ws >= 0);
	gf_ws_send_frame(ws, 2, 1, "\"GetState\"", 10);
	r = gf_ws_recv(ws, buf, sizeof(buf), 5000, &code);
	CHECK(r == -2 || r == -1); /* closed */
	close(ws);
	printf("case 3: WebSocket message over the limit (one frame, %d fragments): closed 1009; binary: "
	       "closed\n",
	       sent);
	status_prompt("case 3", 1000);
}

/* How many of @p fds (@p n) have something to read (a line or EOF) now. */
static int readable(const int *fds, int n)
{
	struct pollfd p[3 * GF_API_MAX_CLIENTS];
	CHECK(n <= (int)(sizeof(p) / sizeof(p[0])));
	for (int i = 0; i < n; i++)
		p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
	int r = poll(p, (nfds_t)n, 0);
	CHECK(r >= 0);
	return r;
}

/* Until none of @p fds has become readable for @p quiet_ms (10 s at most): each one the daemon
 * answers has its answer then, and the rest are silent for that long, watched all at once. */
static void settle(const int *fds, int n, int quiet_ms)
{
	double t0 = gf_now_s(), since = t0;
	for (int seen = readable(fds, n); gf_now_s() - since < quiet_ms / 1000.0;) {
		CHECK(gf_now_s() - t0 < 10.0);
		usleep(10000);
		int now = readable(fds, n);
		if (now != seen)
			seen = now, since = gf_now_s();
	}
}

static void case4(void)
{
	enum { N = 3 * GF_API_MAX_CLIENTS };
	int fds[N], served = 0, refused = 0;
	for (int i = 0; i < N; i++)
		fds[i] = dial();
	status_prompt("case 4, Unix connections over the cap", 1000);
	settle(fds, N, 300);
	for (int i = 0; i < N; i++) {
		if (readable(&fds[i], 1) == 0) {
			served++; /* accepted, waiting for a command: silent for 300 ms */
			continue;
		}
		const char *l = read_line(fds[i], 2000);
		if (l && strstr(l, "too many control connections")) {
			const char *e = read_line(fds[i], 2000);
			refused += e && !*e; /* and closed */
		}
	}
	printf("case 4: %d Unix connections: %d held, %d refused (cap %u)\n", N, served, refused,
	       GF_API_MAX_CLIENTS);
	CHECK(served == (int)GF_API_MAX_CLIENTS && refused == N - (int)GF_API_MAX_CLIENTS);
	int first_held = -1;
	for (int i = 0; i < N && first_held < 0; i++) {
		char c;
		if (recv(fds[i], &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN)
			first_held = i;
	}
	CHECK(first_held >= 0);
	expect_line(fds[first_held], "\"GetState\"\n", 11, "Running", "a held connection over the cap");
	for (int i = 0; i < N; i++)
		close(fds[i]);

	/* One address gets its share of the WebSocket's slots; others theirs, up to the cap. */
	static const char *const from[3] = {"127.0.0.1", "127.0.0.2", "127.0.0.3"};
	int ws[N], wsok[3] = {0};
	struct gf_ws_opts quiet = {.quiet = 1};
	for (int i = 0; i < N; i++) {
		quiet.from = from[i / GF_API_MAX_CLIENTS];
		ws[i] = gf_ws_connect_opts("127.0.0.1", port, 1000, &quiet);
		wsok[i / GF_API_MAX_CLIENTS] += ws[i] >= 0;
	}
	printf("case 4: %d WebSocket connections from 3 addresses: %d, %d and %d upgraded (cap %u, %u per "
	       "address)\n",
	       N, wsok[0], wsok[1], wsok[2], GF_API_MAX_CLIENTS, GF_API_MAX_PER_PEER);
	CHECK(wsok[0] == (int)GF_API_MAX_PER_PEER && wsok[1] == (int)GF_API_MAX_PER_PEER && wsok[2] == 0);
	status_prompt("case 4, WebSocket connections over the cap", 1000);
	for (int i = 0; i < N; i++)
		if (ws[i] >= 0)
			close(ws[i]);
}

static void case5(void)
{
	char st0[GF_STATUS_MAX], st[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st0, sizeof(st0));
	int mute[4];
	static char req[64 * 1024];
	for (size_t k = 0; k + 14 <= sizeof(req); k += 14)
		memcpy(req + k, "\"GetStatus\"  \n", 14);
	for (int i = 0; i < 4; i++) {
		mute[i] = dial();
		int sz = 4096;
		setsockopt(mute[i], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		fcntl(mute[i], F_SETFL, O_NONBLOCK);
	}
	int ws = gf_ws_connect("127.0.0.1", port, 5000);
	CHECK(ws >= 0);
	kill(dm.pid, SIGHUP); /* a reload while they flood */
	double t0 = gf_now_s();
	int dropped = 0, ws_dropped = 0;
	while (gf_now_s() < t0 + 20.0 && (dropped < 4 || !ws_dropped)) {
		for (int i = 0; i < 4; i++) {
			if (mute[i] < 0)
				continue;
			if (send(mute[i], req, sizeof(req) - sizeof(req) % 14, MSG_NOSIGNAL) < 0 &&
			    (errno == EPIPE || errno == ECONNRESET)) {
				close(mute[i]);
				mute[i] = -1;
				dropped++;
			}
		}
		if (!ws_dropped && gf_ws_send(ws, "\"GetStatus\"") < 0)
			ws_dropped = 1;
		status_prompt("case 5, clients that never read", -1000);
	}
	printf("  status answered throughout, the slowest in %.0f ms\n", slowest_ms);
	printf("case 5: %d of 4 Unix clients that never read dropped, the WebSocket one %s, in %.1f s\n",
	       dropped, ws_dropped ? "too" : "not", gf_now_s() - t0);
	CHECK(dropped == 4 && ws_dropped);
	close(ws);
	gf_daemon_idle_ms(&dm, 500);
	gf_daemon_query_status(&dm, st, sizeof(st));
	CHECK(gf_daemon_status_num(st, "reloads") == gf_daemon_status_num(st0, "reloads") + 1);
	CHECK(gf_daemon_status_num(st, "reload_failures") == 0);
	CHECK(gf_daemon_status_num(st, "blocks") > gf_daemon_status_num(st0, "blocks"));
}

/* ---- case 6: browsers ------------------------------------------------------------------ */

/* @p line is an HTTP status line with the status @p code (lws answers a refused upgrade in
 * HTTP/1.0, the rest in 1.1). */
static int status_is(const char *line, const char *code)
{
	return strncmp(line, "HTTP/1.", 7) == 0 && strncmp(line + 9, code, 3) == 0;
}

/* The first line of the answer to @p req sent on a fresh connection, followed at once by a masked
 * SetVolume frame (as a page's script would send on open), in @p line; where it was upgraded the
 * SetVolume is sent again (its first may have come too early) and its reply read. */
static void raw_request(const char *req, int then_frame, char *line, size_t size)
{
	int fd = gf_tcp_dial("127.0.0.1", port, NULL);
	CHECK(fd >= 0);
	CHECK(send(fd, req, strlen(req), MSG_NOSIGNAL) == (ssize_t)strlen(req));
	if (then_frame)
		gf_ws_send(fd, "{\"SetVolume\": -50}");
	size_t n = 0;
	double end = gf_now_s() + 5.0;
	while (n < size - 1 && gf_now_s() < end && !memchr(line, '\n', n)) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 100) != 1)
			continue;
		ssize_t r = recv(fd, line + n, 1, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	line[n] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	if (then_frame && status_is(line, "101")) { /* upgraded: as a page does once open */
		char buf[512];
		CHECK(gf_ws_call(fd, "{\"SetVolume\": -50}", buf, sizeof(buf), 5000) == -1 ||
		      strstr(buf, "SetVolume"));
	}
	close(fd);
}

/* The daemon's volume, over a WebSocket without an Origin. */
static double ws_volume(void)
{
	char buf[512];
	int ws = gf_ws_connect("127.0.0.1", port, 5000);
	CHECK(ws >= 0 && gf_ws_call(ws, "\"GetVolume\"", buf, sizeof(buf), 5000) > 0);
	close(ws);
	const char *v = strstr(buf, "\"value\":");
	CHECK(v);
	return strtod(v + 8, NULL);
}

/* An upgrade with @p host (NULL: ours) and @p origin (NULL: none) answers @p want, and a SetVolume
 * sent behind it changes the volume only where the upgrade was accepted. */
static void upgrade(const char *host, const char *origin, const char *want, const char *what)
{
	char req[1024], hosth[200], org[300] = "", line[256];
	snprintf(hosth, sizeof(hosth), "127.0.0.1:%d", port);
	if (origin)
		snprintf(org, sizeof(org), "Origin: %s\r\n", origin);
	snprintf(req, sizeof(req),
		 "GET / HTTP/1.1\r\nHost: %s\r\n%sUpgrade: websocket\r\nConnection: Upgrade\r\n"
		 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
		 host ? host : hosth, org);
	raw_request(req, 1, line, sizeof(line));
	gf_daemon_idle_ms(&dm, 200);
	double v = ws_volume();
	printf("  %-58s %-28s volume %.0f\n", what, line, v);
	if (!status_is(line, want))
		gf_daemon_die(&dm, what);
	int accepted = strcmp(want, "101") == 0;
	if (accepted ? v != -50.0 : v != 0.0)
		gf_daemon_die(&dm, "the SetVolume behind an upgrade ran where it should not, or did not run");
	if (accepted) { /* back to 0 for the next case */
		char buf[512];
		int ws = gf_ws_connect("127.0.0.1", port, 5000);
		CHECK(ws >= 0 && gf_ws_call(ws, "{\"SetVolume\": 0}", buf, sizeof(buf), 5000) > 0);
		close(ws);
	}
}

static void get(const char *path, const char *host, const char *want, const char *what)
{
	char req[512], line[256];
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, host);
	raw_request(req, 0, line, sizeof(line));
	printf("  %-58s %s\n", what, line);
	if (!status_is(line, want))
		gf_daemon_die(&dm, what);
}

static void case6(void)
{
	char own[64], other[64], evil[64], lh[64], wrong_port[64];
	snprintf(own, sizeof(own), "http://127.0.0.1:%d", port);
	snprintf(other, sizeof(other), "http://127.0.0.1:%d", port + 1);
	snprintf(evil, sizeof(evil), "evil.example:%d", port);
	snprintf(lh, sizeof(lh), "localhost:%d", port);
	snprintf(wrong_port, sizeof(wrong_port), "127.0.0.1:%d", port + 1);
	printf("case 6: requests a browser could make for a hostile page\n");
	char evil_origin[80], lh_origin[80];
	snprintf(evil_origin, sizeof(evil_origin), "http://%s", evil);
	snprintf(lh_origin, sizeof(lh_origin), "http://localhost.evil.example:%d", port);
	upgrade(NULL, other, "403", "upgrade from a page on another local port");
	upgrade(NULL, "https://evil.example", "403", "upgrade from a page of another site");
	upgrade(NULL, lh_origin, "403", "upgrade from a look-alike origin");
	upgrade(NULL, "null", "403", "upgrade from a sandboxed page (Origin: null)");
	upgrade(evil, evil_origin, "421", "upgrade after DNS rebinding (Host: evil.example)");
	upgrade(evil, NULL, "421", "upgrade with another Host and no Origin");
	upgrade(wrong_port, NULL, "421", "upgrade with another port in Host");
	upgrade(NULL, own, "101", "upgrade from the daemon's own page");
	upgrade(lh, "http://LOCALHOST:0", "403", "upgrade from localhost on port 0");
	upgrade("ui.example:8080", "http://ui.example:8080", "101",
		"upgrade from a control_allowed_origins page");
	upgrade(lh, NULL, "101", "upgrade without an Origin (not a browser)");
	get("/", evil, "421", "GET / after DNS rebinding");
	get("/response.svg", evil, "421", "GET /response.svg after DNS rebinding");
	get("/?volume=-50", lh, "200", "GET / for localhost");
	get("/", "ui.example:8080", "200", "GET / through an allowed origin's name");
	CHECK(ws_volume() == 0.0); /* no GET changed it */
	status_prompt("case 6", 1000);
}

/* ---- case 7: a half-open flood -------------------------------------------------------- */

/* 1 once @p fd's peer closed it (EOF or reset), reading and dropping what came. */
static int closed_by_peer(int fd)
{
	char b[4096];
	for (;;) {
		ssize_t r = recv(fd, b, sizeof(b), MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
			return 1;
		if (r < 0)
			return 0;
	}
}

/* Open @p fd as a half-open connection from @p from: 0 upgraded, then one byte of a frame's header;
 * 1 half an upgrade request; 2 nothing sent. @return the socket, or -1 (refused: no room) */
static int half_open(int kind, const char *from)
{
	if (kind == 0) {
		struct gf_ws_opts o = {.from = from, .quiet = 1};
		int fd = gf_ws_connect_opts("127.0.0.1", port, 2000, &o);
		if (fd >= 0)
			CHECK(send(fd, "\x81", 1, MSG_NOSIGNAL) == 1);
		return fd;
	}
	int fd = gf_tcp_dial("127.0.0.1", port, from);
	CHECK(fd >= 0);
	if (kind == 1)
		CHECK(send(fd, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpg", 37, MSG_NOSIGNAL) == 37);
	return fd;
}

/* How long until the daemon closes each of @p fds (@p n, -1 entries skipped), at most @p limit s:
 * the longest wait, or -1 when some are still open. */
static double all_closed(const int *fds, int n, double limit)
{
	double t0 = gf_now_s();
	int left = n;
	while (left && gf_now_s() < t0 + limit) {
		left = 0;
		for (int i = 0; i < n; i++)
			left += fds[i] >= 0 && !closed_by_peer(fds[i]);
		if (left)
			usleep(100000);
	}
	return left ? -1.0 : gf_now_s() - t0;
}

static void case7(void)
{
	/* Two addresses' share (the table) sends one byte of a frame each; a third's half requests
	 * find no room. */
	enum { N = 3 * GF_API_MAX_PER_PEER };
	static const char *const from[3] = {"127.0.0.2", "127.0.0.3", "127.0.0.4"};
	int fd[N];
	double t0 = gf_now_s();
	for (int i = 0; i < N; i++)
		fd[i] = half_open(i < 2 * (int)GF_API_MAX_PER_PEER ? 0 : 1, from[i / GF_API_MAX_PER_PEER]);
	gf_daemon_idle_ms(&dm, 300);
	int held = 0;
	for (int i = 0; i < N; i++)
		held += fd[i] >= 0 && !closed_by_peer(fd[i]);
	printf("case 7: %d half-open connections, %d held\n", N, held);
	CHECK(held == (int)GF_API_MAX_CLIENTS); /* the table is full */
	/* A legitimate client tries every half second, as a page's reconnect would. */
	int ws = -1, tries = 0;
	struct gf_ws_opts quiet = {.quiet = 1};
	while (ws < 0 && gf_now_s() < t0 + 20.0) {
		tries++;
		if ((ws = gf_ws_connect_opts("127.0.0.1", port, 1000, &quiet)) < 0)
			usleep(500000);
	}
	double in = gf_now_s() - t0;
	char buf[4096];
	printf("  a legitimate client got in after %.1f s (%d tries)\n", in, tries);
	/* The flood's slots free after the ping's deadline and its pong's; a try every 1.5 s at most. */
	CHECK(ws >= 0 && in < 2 * DEADLINE_S + 3.0);
	CHECK(gf_ws_call(ws, "\"GetState\"", buf, sizeof(buf), 5000) > 0 && strstr(buf, "Running"));
	double gone = all_closed(fd, N, 2 * DEADLINE_S + 3.0);
	printf("  all of them closed %.1f s later\n", gone);
	CHECK(gone >= 0.0);
	for (int i = 0; i < N; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	/* A silent connection and half a request: closed after the handshake deadline. */
	int hs[2] = {half_open(2, from[2]), half_open(1, from[2])};
	gone = all_closed(hs, 2, 3 * DEADLINE_S + 5.0);
	printf("  a silent connection and half a request: closed after %.1f s (the deadline %.1f s)\n", gone,
	       DEADLINE_S);
	CHECK(gone >= DEADLINE_S - 0.5 && gone < DEADLINE_S + 2.0);
	close(hs[0]);
	close(hs[1]);
	/* The legitimate one, quiet since, is still served. */
	CHECK(gf_ws_call(ws, "\"GetState\"", buf, sizeof(buf), 5000) > 0 && strstr(buf, "Running"));
	close(ws);
	status_prompt("case 7", 1000);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	const char *bin = gf_daemon_test_bin(0);
	uint64_t rng = gf_test_seed("test_hostile_api");
	float h[32];
	gf_daemon_init(&dm, "hostile-api");
	gf_test_fill_decaying_taps(h, 32, &rng);
	gf_daemon_write_taps_text(&dm, "taps.txt", h, 32);
	snprintf(ctl_path, sizeof(ctl_path), "%s/control", dm.dir);
	port = gf_daemon_free_tcp_port();
	FILE *f = gf_daemon_conf_begin(&dm, RATE, 256, "cpu", CH, "system");
	fprintf(f,
		"control_socket = \"%s\";\ncontrol_port = %d;\n"
		"control_allowed_origins = [\"http://ui.example:8080\"];\n"
		"filters = ( { name = \"f\"; file = \"taps.txt\"; format = \"text\"; } );\nchain = "
		"[\"f\"];\n",
		ctl_path, port);
	CHECK(fclose(f) == 0);
	if (gf_jack_server_start(&dm.jack, "gpufir-hapi", RATE, 64) != 0)
		gf_test_skip("no private JACK server (jackd missing or did not start)");
	char deadline[16];
	snprintf(deadline, sizeof(deadline), "%d", DEADLINE_MS);
	CHECK(setenv("GPUFIR_TEST_API_TIMEOUT_MS", deadline, 1) == 0);
	gf_daemon_spawn(&dm, bin, 0);
	CHECK(unsetenv("GPUFIR_TEST_API_TIMEOUT_MS") == 0);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	case1();
	case2();
	case3();
	case4();
	case5();
	case6();
	case7();
	gf_daemon_terminate(&dm, 5.0, "stop after the hostile clients");
	gf_daemon_finish(&dm);
	printf("test_hostile_api: ok\n");
	return 0;
}
