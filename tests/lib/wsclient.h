/**
 * @file wsclient.h
 * A minimal WebSocket client for the control API's tests, written from RFC
 * 6455 with no library, so the daemon's libwebsockets side meets a client it
 * does not share code with: the HTTP upgrade (the server's
 * answer checked for 101 and a Sec-WebSocket-Accept), masked text frames out, unfragmented text
 * and close frames in, pings answered. Blocking with timeouts; tests only.
 */
#ifndef GPUFIR_TESTS_WSCLIENT_H
#define GPUFIR_TESTS_WSCLIENT_H

#include <stddef.h>

/** Connect to ws://@p host:@p port/ and upgrade. @return the socket, or -1 (why printed) */
int gf_ws_connect(const char *host, int port, int timeout_ms);

/** What a browser (or an attacker) would put in the upgrade, and what came back. */
struct gf_ws_opts {
	const char *host_header; /**< the Host header; NULL: HOST:PORT */
	const char *origin;	 /**< the Origin header; NULL: none (a client that is not a browser) */
	const char *from;	 /**< the local address to connect from (e.g. 127.0.0.2); NULL: any */
	char *response;		 /**< if not NULL, the server's answer (up to its blank line, or all
				      that came) */
	size_t response_size;
	int quiet; /**< do not print why an upgrade failed */
};

/** As gf_ws_connect, with @p o's headers and source address. @return the socket, or -1 */
int gf_ws_connect_opts(const char *host, int port, int timeout_ms, const struct gf_ws_opts *o);

/** A plain TCP connection to @p host:@p port from @p from (NULL: any). @return the socket, or -1 */
int gf_tcp_dial(const char *host, int port, const char *from);

/** Send @p len bytes as one masked frame of @p opcode (1 text, 2 binary); @p fin 0 starts a fragmented
 * message (later frames: opcode 0). @return 0 or -1 */
int gf_ws_send_frame(int fd, int opcode, int fin, const char *data, size_t len);
/** Send @p text as one text frame. @return 0 or -1 */
int gf_ws_send(int fd, const char *text);

/**
 * Read one message into @p buf (NUL-terminated); a ping on the way is answered (as a browser's
 * WebSocket does) and not returned. @return its length, -2 on a close frame (its status in
 * *@p close_code if not NULL), -1 on EOF, error or timeout
 */
long gf_ws_recv(int fd, char *buf, size_t len, int timeout_ms, int *close_code);

/** Send @p cmd, read the reply into @p buf. @return as gf_ws_recv */
long gf_ws_call(int fd, const char *cmd, char *buf, size_t len, int timeout_ms);

#endif
