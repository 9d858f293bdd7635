/**
 * @file status.h
 * The running daemon's status socket: a Unix stream socket that answers each
 * connection with one plain-text status block and closes it.
 *
 * Protocol: connect, read until EOF. The client need not send anything (a
 * request line, if sent, is ignored). The answer is "key: value" lines, UTF-8,
 * at most GF_STATUS_MAX bytes; the first line is "gpufir <version>".
 *
 * Control thread only. The server never blocks: accept and send are
 * non-blocking, and a client too slow to take a few KiB is dropped.
 */
#ifndef GPUFIR_STATUS_H
#define GPUFIR_STATUS_H

#include <stddef.h>

#include "error.h"

/** Where `gpufir --status` looks when given no path (the service's RuntimeDirectory). */
#define GF_STATUS_DEFAULT_PATH "/run/gpufir/status"
/** Largest status block. */
#define GF_STATUS_MAX 8192

struct gf_status_server;

/**
 * Listen on @p path. A stale socket left by a crashed daemon is replaced; a
 * path where another daemon answers is refused (GF_E_BUSY).
 * @return 0, GF_E_BUSY, GF_E_INVAL (path too long) or GF_E_SYSTEM; details in @p eb
 */
int gf_status_server_new(struct gf_status_server **out, const char *path, struct gf_errbuf *eb);

/** Closes the socket and removes its path, if the file there is still its own. Accepts NULL. */
void gf_status_server_free(struct gf_status_server *s);

/**
 * 1 while the socket file at the path is the one this server bound; 0 once
 * it was removed (someone cleaned /run/gpufir) or replaced: then no client
 * can reach this server any more.
 */
int gf_status_server_bound(const struct gf_status_server *s);

/**
 * If the socket file was removed or replaced, listen again at the same path
 * (a stale socket there is cleared as at start; a live one is left alone).
 * @return 0 (still bound: nothing done), 1 (re-created: *@p s is the new
 *         server, the old one freed), or an error of gf_status_server_new
 *         (*@p s unchanged; call again later), details in @p eb
 */
int gf_status_server_renew(struct gf_status_server **s, struct gf_errbuf *eb);

/** The listening descriptor, to poll for POLLIN. */
int gf_status_server_fd(const struct gf_status_server *s);

/** The path it listens on. */
const char *gf_status_server_path(const struct gf_status_server *s);

/** Answer every pending connection with @p text. @return connections served */
int gf_status_server_serve(struct gf_status_server *s, const char *text);

/**
 * Client side: connect to @p path, read the whole answer into @p buf
 * (NUL-terminated, truncated to @p len - 1). Waits at most @p timeout_ms.
 * @return 0, GF_E_IO (no daemon there / timed out) or GF_E_INVAL; details in @p eb
 */
int gf_status_query(const char *path, char *buf, size_t len, int timeout_ms, struct gf_errbuf *eb);

#endif
