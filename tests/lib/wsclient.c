#define _GNU_SOURCE /* strcasestr */
#include "wsclient.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

static int wait_in(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, timeout_ms) == 1 ? 0 : -1;
}

static int write_all(int fd, const void *b, size_t n)
{
	const char *p = b;
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_n(int fd, void *b, size_t n, int timeout_ms)
{
	char *p = b;
	while (n) {
		if (wait_in(fd, timeout_ms) < 0)
			return -1;
		ssize_t r = recv(fd, p, n, 0);
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int gf_tcp_dial(const char *host, int port, const char *from)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct sockaddr_in src = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
	    (from && (inet_pton(AF_INET, from, &src.sin_addr) != 1 ||
		      bind(fd, (struct sockaddr *)&src, sizeof(src)) != 0)) ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		printf("ws: cannot connect to %s:%d%s%s: %s\n", host, port, from ? " from " : "",
		       from ? from : "", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int gf_ws_connect_opts(const char *host, int port, int timeout_ms, const struct gf_ws_opts *o)
{
	static const struct gf_ws_opts none = {0};
	o = o ? o : &none;
	int fd = gf_tcp_dial(host, port, o->from);
	if (fd < 0)
		return -1;
	char req[1024], hosth[300], origin[300] = "";
	snprintf(hosth, sizeof(hosth), "%s:%d", host, port);
	if (o->origin)
		snprintf(origin, sizeof(origin), "Origin: %s\r\n", o->origin);
	int n = snprintf(req, sizeof(req),
			 "GET / HTTP/1.1\r\nHost: %s\r\n%sUpgrade: websocket\r\nConnection: Upgrade\r\n"
			 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
			 "Sec-WebSocket-Protocol: gpufir\r\n\r\n",
			 o->host_header ? o->host_header : hosth, origin);
	char resp[2048] = "";
	size_t len = 0;
	if (write_all(fd, req, (size_t)n) == 0) {
		while (len < sizeof(resp) - 1 &&
		       !strstr(resp, "\r\n\r\n")) { /* byte by byte: no frame read early */
			if (read_n(fd, resp + len, 1, timeout_ms) < 0)
				break;
			resp[++len] = '\0';
		}
	}
	resp[len] = '\0';
	if (o->response)
		snprintf(o->response, o->response_size, "%s", resp);
	/* RFC 6455's example key; its accept value is s3pPLMBiTxaQ9kYGzzhZRbK+xOo=. */
	if (strncmp(resp, "HTTP/1.1 101", 12) != 0 || !strcasestr(resp, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")) {
		if (!o->quiet)
			printf("ws: upgrade refused after %zu bytes: %.200s (%s)\n", len, resp,
			       strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int gf_ws_connect(const char *host, int port, int timeout_ms)
{
	return gf_ws_connect_opts(host, port, timeout_ms, NULL);
}

int gf_ws_send_frame(int fd, int opcode, int fin, const char *data, size_t len)
{
	unsigned char h[14];
	size_t k = 0;
	h[k++] = (unsigned char)((fin ? 0x80 : 0) | opcode);
	if (len < 126) {
		h[k++] = (unsigned char)(0x80 | len);
	} else if (len < 65536) {
		h[k++] = 0x80 | 126;
		h[k++] = (unsigned char)(len >> 8);
		h[k++] = (unsigned char)len;
	} else {
		h[k++] = 0x80 | 127;
		for (int i = 7; i >= 0; i--)
			h[k++] = (unsigned char)((uint64_t)len >> (8 * i));
	}
	const unsigned char mask[4] = {0x12, 0x34, 0x56, 0x78};
	memcpy(h + k, mask, 4);
	k += 4;
	/* Header and payload in one write: as two, Nagle's algorithm held the payload back until the
	 * daemon's delayed ACK of the header, 40 ms a frame on loopback. */
	char *m = malloc(k + len);
	if (!m)
		return -1;
	memcpy(m, h, k);
	for (size_t i = 0; i < len; i++)
		m[k + i] = (char)(data[i] ^ mask[i & 3]);
	int r = write_all(fd, m, k + len);
	free(m);
	return r;
}

int gf_ws_send(int fd, const char *text)
{
	return gf_ws_send_frame(fd, 1, 1, text, strlen(text));
}

static long recv_frame(int fd, char *buf, size_t len, int timeout_ms, int *close_code);

long gf_ws_recv(int fd, char *buf, size_t len, int timeout_ms, int *close_code)
{
	for (;;) {
		long r = recv_frame(fd, buf, len, timeout_ms, close_code);
		if (r != -3)
			return r;
	}
}

/* One frame: as gf_ws_recv, or -3 for a ping (answered). */
static long recv_frame(int fd, char *buf, size_t len, int timeout_ms, int *close_code)
{
	unsigned char h[2];
	if (read_n(fd, h, 2, timeout_ms) < 0)
		return -1;
	uint64_t n = h[1] & 0x7f;
	unsigned char ext[8];
	if (n == 126) {
		if (read_n(fd, ext, 2, timeout_ms) < 0)
			return -1;
		n = (uint64_t)ext[0] << 8 | ext[1];
	} else if (n == 127) {
		if (read_n(fd, ext, 8, timeout_ms) < 0)
			return -1;
		n = 0;
		for (int i = 0; i < 8; i++)
			n = n << 8 | ext[i];
	}
	if (n >= len || (h[1] & 0x80)) /* too long for the caller, or masked (servers never mask) */
		return -1;
	if (read_n(fd, buf, (size_t)n, timeout_ms) < 0)
		return -1;
	buf[n] = '\0';
	if ((h[0] & 0x0f) == 9) /* a ping: the pong carries its payload */
		return gf_ws_send_frame(fd, 10, 1, buf, (size_t)n) == 0 ? -3 : -1;
	if ((h[0] & 0x0f) == 8) {
		if (close_code)
			*close_code = n >= 2 ? ((unsigned char)buf[0] << 8 | (unsigned char)buf[1]) : 0;
		return -2;
	}
	return (long)n;
}

long gf_ws_call(int fd, const char *cmd, char *buf, size_t len, int timeout_ms)
{
	if (gf_ws_send(fd, cmd) < 0)
		return -1;
	return gf_ws_recv(fd, buf, len, timeout_ms, NULL);
}
